/**
 * Which archived messages a batch, a search hit or the clip-archive stands for. Pure: functions over
 * archive entries as `memory.list` and `memory.search` return them.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';

/** Message ids under each summary batch: its sources at depth 0, its children's messages above. */
export function batchCoverage(summaries: readonly ArchiveEntry[]): Map<string, ReadonlySet<string>> {
  const byLabel = new Map(summaries.filter((e) => e.kind === 'summary').map((e) => [e.label, e]));
  const covered = new Map<string, ReadonlySet<string>>();
  const visit = (label: string, path: Set<string>): ReadonlySet<string> => {
    const known = covered.get(label);
    if (known) return known;
    const entry = byLabel.get(label);
    // A label that is not a batch here, or a cycle, covers nothing rather than looping.
    if (!entry || path.has(label)) return new Set();
    path.add(label);
    const ids = entry.depth === 0 ? new Set(entry.sourceIds) : new Set(entry.sourceIds.flatMap((child) => [...visit(child, path)]));
    path.delete(label);
    covered.set(label, ids);
    return ids;
  };
  for (const label of byLabel.keys()) visit(label, new Set());
  return covered;
}

/** Message ids a search hit covers: a summary's messages, or a transcript segment's own messages. */
export function hitCoverage(entry: ArchiveEntry, coverage: ReadonlyMap<string, ReadonlySet<string>>): ReadonlySet<string> {
  if (entry.kind === 'transcript') return new Set(entry.messages ? entry.messages.map((m) => m.id) : entry.sourceIds);
  return coverage.get(entry.label) ?? (entry.depth === 0 ? new Set(entry.sourceIds) : new Set());
}

/** Message ids covered by the batches the clip-archive shows. */
export function shownCoverage(shownLabels: readonly string[], coverage: ReadonlyMap<string, ReadonlySet<string>>): Set<string> {
  return new Set(shownLabels.flatMap((label) => [...(coverage.get(label) ?? [])]));
}

/** The depth-0 batches that summarize any of these messages (the text answer retention reads). */
export function coveringBatches(summaries: readonly ArchiveEntry[], messageIds: readonly string[]): ArchiveEntry[] {
  const wanted = new Set(messageIds);
  return summaries.filter((e) => e.kind === 'summary' && e.depth === 0 && e.sourceIds.some((id) => wanted.has(id)));
}

/** Appended messages that are neither live nor a source of a depth-0 batch (memfold must leave none). */
export function lostMessages(
  appended: readonly Pick<ConversationMessage, 'id'>[],
  live: readonly Pick<ConversationMessage, 'id'>[],
  summaries: readonly ArchiveEntry[],
): number {
  const kept = new Set(live.map((m) => m.id));
  for (const batch of summaries) if (batch.kind === 'summary' && batch.depth === 0) for (const id of batch.sourceIds) kept.add(id);
  return appended.filter((m) => !kept.has(m.id)).length;
}
