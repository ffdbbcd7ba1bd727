/**
 * Turn fold outputs into SummaryBatch entries: header, span, count, label. Pure.
 */
import type { ArchiveEntry, SummaryBatch } from '../../conversation/types.js';
import { batchContent } from '../format/headers.js';
import { baseLabel, uniqueLabel } from '../format/labels.js';
import { distinctSessions } from '../../conversation/sessions.js';
import { timeSpan } from '../format/time-span.js';

export interface BatchDraft {
  depth: number;
  summary: string;
  /** Start and end times of every source (messages or child batches). */
  sourceTimes: string[];
  sourceIds: string[];
  /** The sessions the sources cover, oldest first (left off when none is known). */
  sessions?: string[];
}

/** The label each draft gets unless it is taken (see labels.ts). */
export function baseLabels(drafts: readonly BatchDraft[]): string[] {
  return drafts.map((d) => baseLabel({ kind: 'summary', depth: d.depth, time: timeSpan(d.sourceTimes).end, sourceIds: d.sourceIds }));
}

/**
 * Build batches; `taken` holds labels already in the archive, so a colliding one gets a longer hash.
 * Labels stay deterministic for given sources.
 */
export function buildBatches(conversationId: string, operationId: string, drafts: readonly BatchDraft[], taken: ReadonlySet<string>): SummaryBatch[] {
  const used = new Set(taken);
  return drafts.map((draft) => {
    const { start, end } = timeSpan(draft.sourceTimes);
    const label = uniqueLabel({ kind: 'summary', depth: draft.depth, time: end, sourceIds: draft.sourceIds }, used);
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
      ...(draft.sessions !== undefined && draft.sessions.length > 0 ? { sessions: [...draft.sessions] } : {}),
    };
  });
}

/** `batch` with `summary` as its text (label, span and sources unchanged: they depend on the sources alone). */
export function withSummary(batch: SummaryBatch, summary: string): SummaryBatch {
  return { ...batch, content: batchContent({ depth: batch.depth, start: batch.start, end: batch.end, count: batch.count }, summary) };
}

/** The sessions of child batches: their union, oldest first (children without sessions add none). */
export function childSessions(children: readonly ArchiveEntry[]): string[] {
  return distinctSessions(children.flatMap((c) => c.sessions ?? []));
}

/** Source times of child batches: both ends of each. */
export function childTimes(children: readonly ArchiveEntry[]): string[] {
  return children.flatMap((c) => [c.start, c.end]);
}
