/**
 * Write chosen units as the summary text: sections in a fixed order (each omitted when empty); within a section,
 * units in conversation order, consecutive units of one speaker and day on one line: `- [YYYY-MM-DD] speaker: text
 * text`. A line shows its day only when it differs from the line above, so a one-day stretch is dated once per section.
 * Also the exact character cost of adding a unit, which selection uses so that the written summary fits its budget.
 */
import { SECTIONS, type SectionKey } from './classify.js';
import type { Unit } from './units.js';

function heading(section: SectionKey): string {
  return SECTIONS.find((s) => s.key === section)!.heading;
}

const sameLine = (a: Unit, b: Unit): boolean => a.date === b.date && a.speaker === b.speaker;

/** Between two units of a line: a space after a sentence, else `; ` (tool calls, values, fragments). */
function joiner(previous: Unit): string {
  return /[.!?…]$/.test(previous.text) ? ' ' : '; ';
}

function prefix(unit: Unit, previousDate: string | undefined): string {
  const date = unit.date && unit.date !== previousDate ? `[${unit.date}] ` : '';
  const speaker = unit.speaker ? `${unit.speaker}: ` : '';
  return `- ${date}${speaker}`;
}

/** The lines of a section's units (already in order); `previousDate` is the day of the line above them. */
function lines(units: readonly Unit[], previousDate: string | undefined): string[] {
  const out: string[] = [];
  let line = '';
  let last: Unit | undefined;
  let date = previousDate;
  for (const unit of units) {
    if (last && sameLine(last, unit)) {
      line += joiner(last) + unit.text;
    } else {
      if (last) out.push(line);
      line = prefix(unit, date) + unit.text;
      date = unit.date ?? date;
    }
    last = unit;
  }
  if (last) out.push(line);
  return out;
}

const linesLength = (units: readonly Unit[], previousDate: string | undefined): number =>
  lines(units, previousDate).reduce((sum, line) => sum + line.length + 1, 0);

/** Chosen units by section, in order, with the cost of adding one more. */
export interface Layout {
  /** Characters `unit` would add to the rendered text (an upper bound: a new section counts its blank line). */
  cost(unit: Unit): number;
  add(unit: Unit): void;
  render(): string;
}

export function createLayout(): Layout {
  const sections = new Map<SectionKey, Unit[]>();
  const insertAt = (list: readonly Unit[], order: number): number => {
    let low = 0;
    let high = list.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (list[mid]!.order < order) low = mid + 1;
      else high = mid;
    }
    return low;
  };
  return {
    cost(unit) {
      const list = sections.get(unit.section);
      if (!list || list.length === 0) return heading(unit.section).length + 2 + linesLength([unit], undefined);
      const i = insertAt(list, unit.order);
      // Only the lines around the insertion point change: from the start of the line before it to the end of the line after.
      let start = Math.max(0, i - 1);
      while (start > 0 && sameLine(list[start - 1]!, list[start]!)) start--;
      let end = Math.min(list.length, i + 1); // exclusive
      while (end < list.length && sameLine(list[end - 1]!, list[end]!)) end++;
      const previousDate = start > 0 ? lastDate(list, start) : undefined;
      const window = list.slice(start, end);
      const withUnit = [...list.slice(start, i), unit, ...list.slice(i, end)];
      return linesLength(withUnit, previousDate) - linesLength(window, previousDate);
    },
    add(unit) {
      const list = sections.get(unit.section) ?? [];
      list.splice(insertAt(list, unit.order), 0, unit);
      sections.set(unit.section, list);
    },
    render() {
      const blocks: string[] = [];
      for (const { key, heading: title } of SECTIONS) {
        const list = sections.get(key);
        if (list && list.length > 0) blocks.push([title, ...lines(list, undefined)].join('\n'));
      }
      return blocks.join('\n\n');
    },
  };
}

/** The day shown by the line above `list[index]`: the latest date among the units before it. */
function lastDate(list: readonly Unit[], index: number): string | undefined {
  for (let k = index - 1; k >= 0; k--) if (list[k]!.date) return list[k]!.date;
  return undefined;
}
