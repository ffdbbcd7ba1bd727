/**
 * Turn fold outputs into SummaryBatch entries: header, span, count, label. Pure.
 */
import type { ArchiveEntry, SummaryBatch } from '../agent/types.js';
import { batchContent } from './headers.js';
import { baseBatchLabel, batchLabel } from './labels.js';
import { timeSpan } from './time-span.js';

export interface BatchDraft {
  depth: number;
  summary: string;
  /** Start and end times of every source (messages or child batches). */
  sourceTimes: string[];
  sourceIds: string[];
}

/** The base label each draft would get (before uniqueness suffixes). */
export function baseLabels(conversationId: string, drafts: readonly BatchDraft[]): string[] {
  return drafts.map((d) => baseBatchLabel(conversationId, timeSpan(d.sourceTimes).end));
}

/**
 * Build batches; `taken` holds labels already in the archive, so colliding ones get the
 * operation suffix. Labels stay deterministic for a given operation.
 */
export function buildBatches(
  conversationId: string,
  operationId: string,
  drafts: readonly BatchDraft[],
  taken: ReadonlySet<string>,
): SummaryBatch[] {
  const used = new Set(taken);
  return drafts.map((draft, index) => {
    const { start, end } = timeSpan(draft.sourceTimes);
    const label = batchLabel(conversationId, end, used, operationId, index);
    used.add(label);
    const count = draft.sourceIds.length;
    return {
      kind: 'summary',
      label,
      conversationId,
      depth: draft.depth,
      start,
      end,
      count,
      content: batchContent({ depth: draft.depth, start, end, count }, draft.summary),
      sourceIds: [...draft.sourceIds],
      operationId,
    };
  });
}

/** Source times of child batches: both ends of each. */
export function childTimes(children: readonly ArchiveEntry[]): string[] {
  return children.flatMap((c) => [c.start, c.end]);
}
