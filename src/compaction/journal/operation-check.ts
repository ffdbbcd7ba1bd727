/**
 * Whether an interrupted compaction can be finished: pure checks over what its journal names, what the
 * archive holds under those labels, and the live rows. Used by reconcile; no I/O.
 */
import type { ArchiveEntry, ConversationMessage } from '../../conversation/types.js';
import type { CompactionOperation } from '../../persistence/persistence-provider.js';
import { originalProblem } from '../clearing/cleared-originals.js';

/** The fields that make a message what it is; the archived copy must carry them unchanged. */
export function messageKey(m: ConversationMessage): string {
  return JSON.stringify([m.id, m.seq, m.role, m.content, m.toolCalls ?? null, m.toolCallId ?? null, m.name ?? null, m.createdAt]);
}

export interface OperationEntries {
  /** The depth-0 batches and transcript segments: what the compaction archived for its messages. */
  archived: ArchiveEntry[];
  /** Batches of depth > 0 it wrote while re-summarizing (finishing drops them; the next compaction redoes it). */
  resummarized: ArchiveEntry[];
}

/** Split the entries an operation wrote into its archive proper and its re-summarization. */
export function splitOperationEntries(operation: CompactionOperation, entries: readonly ArchiveEntry[]): OperationEntries {
  const own = entries.filter((e) => e.operationId === operation.id);
  return {
    archived: own.filter((e) => e.kind === 'transcript' || (e.kind === 'summary' && e.depth === 0)),
    resummarized: own.filter((e) => e.kind === 'summary' && e.depth > 0),
  };
}

/**
 * Why an `archived` operation cannot be finished, or undefined when it can: every message it covers is
 * in exactly one of its depth-0 batches and verbatim in exactly one of its transcript segments, and a
 * message still live is archived unchanged. A live message whose output tier 2 cleared is archived as it was
 * appended: its copy must equal the original in its `tool_output` entry (among `toolOutputs`), and that entry
 * must already be marked as superseded by the segment holding the copy.
 */
export function unfinishableReason(
  operation: CompactionOperation,
  archived: readonly ArchiveEntry[],
  live: readonly ConversationMessage[],
  toolOutputs: readonly ArchiveEntry[] = [],
): string | undefined {
  if (operation.status !== 'archived') return `status is ${operation.status}, not archived`;
  if (operation.messageIds.length === 0) return 'the journal names no messages';
  const wanted = new Set(operation.messageIds);
  const depth0 = archived.filter((e) => e.kind === 'summary');
  const transcripts = archived.filter((e) => e.kind === 'transcript');
  if (depth0.length === 0 || transcripts.length === 0) return 'no depth-0 batch or transcript was read back';

  const covered = new Map<string, number>();
  for (const batch of depth0) for (const id of batch.sourceIds) covered.set(id, (covered.get(id) ?? 0) + 1);
  const copies = new Map<string, ConversationMessage>();
  const segmentOf = new Map<string, string>();
  for (const segment of transcripts) {
    for (const m of segment.messages ?? []) {
      if (copies.has(m.id)) return `message ${m.id} is in two transcript segments`;
      copies.set(m.id, m);
      segmentOf.set(m.id, segment.label);
    }
  }
  const outputs = new Map(toolOutputs.map((e) => [e.label, e]));
  for (const id of wanted) {
    if (covered.get(id) !== 1) return `message ${id} is covered by ${covered.get(id) ?? 0} depth-0 batches`;
    if (!copies.has(id)) return `message ${id} has no transcript copy`;
  }
  if (covered.size !== wanted.size || copies.size !== wanted.size) return 'the archive holds messages the journal does not name';
  // Pinned since it was planned: the commit would refuse it, and the message stays live.
  const pinned = live.find((m) => wanted.has(m.id) && m.pinned === true);
  if (pinned) return `message ${pinned.id} was pinned since`;
  for (const m of live) {
    const copy = copies.get(m.id);
    if (!copy) continue;
    let original = m;
    if (m.clearedOutputLabel !== undefined) {
      const entry = outputs.get(m.clearedOutputLabel);
      const problem = originalProblem(m, entry);
      if (problem) return `cleared message ${m.id}: ${problem}`;
      if (entry!.parentLabel !== segmentOf.get(m.id)) return `the tool output ${entry!.label} of message ${m.id} is not marked as superseded`;
      original = entry!.messages![0]!;
    }
    if (messageKey(copy) !== messageKey(original)) return `the transcript copy of message ${m.id} differs from the live row`;
  }
  return undefined;
}
