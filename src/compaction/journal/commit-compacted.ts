/**
 * The commit step of a compaction: take exactly the archived ids out of the live history (deleted, or in overlay
 * mode marked compacted by the operation) and store the new clip-archive, in one database transaction; then the new
 * history is what the plan kept around the new clip-archive.
 */
import type { ArchiveEntry, ConversationMessage } from '../../conversation/types.js';
import type { OperationUsage, PersistenceProvider } from '../../persistence/persistence-provider.js';
import { buildClipArchive } from '../view/clip-archive.js';
import type { CompactionSettings } from '../compaction-settings.js';
import type { CompactionPlan } from '../plan/plan.js';

export interface CommitInput {
  conversationId: string;
  operationId: string;
  plan: CompactionPlan;
  /** The frontier after archiving and re-summarization, which the clip-archive shows. */
  frontier: readonly ArchiveEntry[];
  /** Every label the operation wrote (the journal's final list). */
  labels: readonly string[];
  /** What the summarizer calls took, kept on the operation row. */
  usage?: OperationUsage;
}

/** Returns the history as it now stands in the live table: system prompt, clip-archive, first turns, pinned units, recent messages. */
export async function commitCompacted(
  input: CommitInput,
  deps: { persistence: PersistenceProvider; settings: Pick<CompactionSettings, 'clipFirst' | 'clipLast' | 'mode'> },
): Promise<ConversationMessage[]> {
  const { conversationId, operationId, plan } = input;
  const clipArchive = buildClipArchive(input.frontier, deps.settings.clipFirst, deps.settings.clipLast);
  const committed = await deps.persistence.commitCompaction({
    conversationId,
    operationId,
    clipArchive,
    deleteIds: plan.compactable.map((m) => m.id),
    labels: [...input.labels],
    // The mode the operation was recorded in (run-compaction records it from the same settings).
    mode: deps.settings.mode,
    // run-compaction recorded the operation with these very ids (`plan.compactable`): the commit does not send them twice.
    idsRecorded: true,
    ...(input.usage ? { usage: input.usage } : {}),
  });
  // The pinned units lie between the first turns and the tail: in seq order, as the live table holds them.
  return [...plan.system, committed.clipArchive, ...plan.firstTurns, ...plan.pinned, ...plan.recent];
}
