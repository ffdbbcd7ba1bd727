/**
 * Write chosen units as the summary text: sections in a fixed order (each omitted when empty), one line per
 * group (speaker and day, or summary line) and section, `- [YYYY-MM-DD] speaker: text; text`. Also the exact character cost of adding a unit,
 * which selection uses so that the written summary fits its budget.
 */
import { SECTIONS, type SectionKey } from './classify.js';
import type { Unit } from './units.js';

function prefix(unit: Unit): string {
  const date = unit.date ? `[${unit.date}] ` : '';
  const speaker = unit.speaker ? `${unit.speaker}: ` : '';
  return `- ${date}${speaker}`;
}

const SEPARATOR = '; ';

function heading(section: SectionKey): string {
  return SECTIONS.find((s) => s.key === section)!.heading;
}

/**
 * Characters a unit adds: its text plus a separator when its line exists already; else its line prefix
 * and a newline, plus the section heading (and the blank line before it) when the section is new.
 */
export function unitCost(unit: Unit, chosen: ReadonlySet<Unit>): number {
  let sectionUsed = false;
  for (const other of chosen) {
    if (other.section !== unit.section) continue;
    sectionUsed = true;
    if (other.group === unit.group) return SEPARATOR.length + unit.text.length;
  }
  const line = prefix(unit).length + unit.text.length + 1;
  return sectionUsed ? line : line + heading(unit.section).length + 2;
}

export function renderSections(chosen: Iterable<Unit>): string {
  const bySection = new Map<SectionKey, Unit[]>();
  for (const unit of chosen) {
    const list = bySection.get(unit.section) ?? [];
    list.push(unit);
    bySection.set(unit.section, list);
  }
  const blocks: string[] = [];
  for (const { key, heading: title } of SECTIONS) {
    const units = bySection.get(key);
    if (!units || units.length === 0) continue;
    units.sort((a, b) => a.order - b.order);
    // One line per group, placed where the group first speaks in this section.
    const lines = new Map<number, string>();
    for (const unit of units) {
      const line = lines.get(unit.group);
      lines.set(unit.group, line === undefined ? prefix(unit) + unit.text : line + SEPARATOR + unit.text);
    }
    blocks.push([title, ...lines.values()].join('\n'));
  }
  return blocks.join('\n\n');
}
