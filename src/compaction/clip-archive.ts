/**
 * The clip-archive: one system message holding the first N and last N batches of the frontier (the
 * batches no higher-depth batch covers), in time order, and saying what was left out and that
 * memory_read finds it. Pure.
 */
import type { ArchiveEntry } from '../agent/types.js';
import { batchBody, formatHeader, neutralizeFraming } from './headers.js';
import { timeSpan } from './time-span.js';

export const CLIP_ARCHIVE_PREFIX = '[Context Summary';
export const CLIP_ARCHIVE_END = '[End of Context Summary]';

export interface ClipSelection {
  shown: ArchiveEntry[];
  omitted: ArchiveEntry[];
  /** Index in `shown` before which the omitted batches sit (the head size). */
  gapAt: number;
}

/** Time order: start, then end, then label (the same order the archive lists in). */
export function byTime(a: Pick<ArchiveEntry, 'start' | 'end' | 'label'>, b: Pick<ArchiveEntry, 'start' | 'end' | 'label'>): number {
  return a.start.localeCompare(b.start) || a.end.localeCompare(b.end) || a.label.localeCompare(b.label);
}

export function selectClip(frontier: readonly ArchiveEntry[], clipFirst: number, clipLast: number): ClipSelection {
  const sorted = [...frontier].sort(byTime);
  if (sorted.length <= clipFirst + clipLast) return { shown: sorted, omitted: [], gapAt: sorted.length };
  return {
    shown: [...sorted.slice(0, clipFirst), ...sorted.slice(sorted.length - clipLast)],
    omitted: sorted.slice(clipFirst, sorted.length - clipLast),
    gapAt: clipFirst,
  };
}

function renderBatch(batch: ArchiveEntry): string {
  const header = formatHeader({ depth: batch.depth, start: batch.start, end: batch.end, count: batch.count });
  return `--- batch ${batch.label}\n${header}\n${neutralizeFraming(batchBody(batch.content))}`;
}

function span(entries: readonly ArchiveEntry[]): { start: string; end: string } {
  return { start: timeSpan(entries.map((e) => e.start)).start, end: timeSpan(entries.map((e) => e.end)).end };
}

export function buildClipArchive(frontier: readonly ArchiveEntry[], clipFirst: number, clipLast: number): string {
  if (frontier.length === 0) return `${CLIP_ARCHIVE_PREFIX}: nothing archived yet]\n${CLIP_ARCHIVE_END}`;
  const { shown, omitted, gapAt } = selectClip(frontier, clipFirst, clipLast);
  const all = span(frontier);
  const lines: string[] = [
    `${CLIP_ARCHIVE_PREFIX}: ${frontier.length} archived batches from ${all.start} to ${all.end}]`,
    'Earlier parts of this conversation were summarized and archived. The memory_read tool searches the archive (by words, or a batch by its label) and returns the exact archived messages.',
  ];
  shown.slice(0, gapAt).forEach((batch) => lines.push('', renderBatch(batch)));
  if (omitted.length > 0) {
    const gap = span(omitted);
    lines.push(
      '',
      `[... ${omitted.length} batches from ${gap.start} to ${gap.end} are not shown here; call memory_read with a query (and from/to) to search them]`,
    );
  }
  shown.slice(gapAt).forEach((batch) => lines.push('', renderBatch(batch)));
  lines.push('', CLIP_ARCHIVE_END);
  return lines.join('\n');
}

/** Labels of the batches a clip-archive text shows, in order (for inspection and tests). */
export function clipArchiveLabels(text: string): string[] {
  return [...text.matchAll(/^--- batch (\S+)$/gm)].map((match) => match[1]!);
}
