/**
 * Recovery of compactions a crash (or a failed undo) left `planned` or `archived`. The journal row names
 * the messages an operation covers and every label it wrote or was about to write, so recovery needs
 * nothing else:
 * - `archived` and every covered message is in the archive, read back, verbatim: finish it. Its
 *   re-summarization writes are dropped (the next compaction redoes them) and the commit runs in the mode the
 *   operation recorded (overlay: marks, never deletes), whatever this process's settings say.
 * - an `archived` clearing of tool outputs (tier 2) whose outputs are archived verbatim and unchanged: its
 *   commit runs (reconcile-clearing.ts).
 * - an `erase` (`erase-conversation.ts`): finish it, always (its journal row said the conversation must go), up to
 *   its boundary: messages appended after it was asked for stay; the conversation's other pending operations go with
 *   it, unreconciled.
 * - anything else: undo it. Marks pointing at its entries are cleared (its batches' children, and the tool
 *   outputs its segments superseded), its own rows deleted (a label another operation holds is left alone), the
 *   operation recorded `rolled_back` (which clears any overlay mark of its own, and only its own). The messages
 *   never left the live table, and their rows never changed.
 * The caller holds the conversation's lock.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import type { CompactionEvent } from '../compaction-result.js';
import type { CompactionSettings } from '../compaction-settings.js';
import type { Archive } from '../../archive/archive.js';
import type { CompactionOperation, PersistenceProvider } from '../../persistence/persistence-provider.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { removeOwnEntries } from '../batches/archive-writer.js';
import { buildClipArchive } from '../view/clip-archive.js';
import { splitOperationEntries, unfinishableReason, type OperationEntries } from './operation-check.js';
import { finishClearing } from './reconcile-clearing.js';
import { finishErase, pendingErase } from '../../erase-export/erase-conversation.js';

export interface ReconcileOutcome {
  operationId: string;
  conversationId: string;
  /** `committed`: finished; `rolled_back`: undone; `busy`: another process holds the conversation (it is running). */
  action: 'committed' | 'rolled_back' | 'busy';
  reason: string;
}

export interface ReconcileDeps {
  archive: Archive;
  persistence: PersistenceProvider;
  settings: Pick<CompactionSettings, 'clipFirst' | 'clipLast'>;
  /** Counts a finished clearing's outputs for their placeholders, as the compactor does. */
  tokens: Pick<TokenCounter, 'countMessage'>;
}

async function finish(operation: CompactionOperation, deps: ReconcileDeps, entries: OperationEntries, live: ConversationMessage[]): Promise<ReconcileOutcome> {
  const { archive, persistence, settings } = deps;
  const { conversationId } = operation;
  const kept = new Set(entries.archived.map((e) => e.label));
  await removeOwnEntries(
    archive,
    conversationId,
    operation.id,
    operation.labels.filter((label) => !kept.has(label)),
  );
  const frontier = await archive.list({ conversationId, kind: 'summary', unmarkedOnly: true });
  const wanted = new Set(operation.messageIds);
  await persistence.commitCompaction({
    conversationId,
    operationId: operation.id,
    deleteIds: live.filter((m) => wanted.has(m.id)).map((m) => m.id),
    clipArchive: buildClipArchive(frontier, settings.clipFirst, settings.clipLast),
    labels: [...kept],
    mode: operation.mode,
  });
  const dropped = entries.resummarized.length > 0 ? `; dropped ${entries.resummarized.length} re-summarized batch(es)` : '';
  return { operationId: operation.id, conversationId, action: 'committed', reason: `every batch was archived and read back${dropped}` };
}

async function undo(operation: CompactionOperation, deps: ReconcileDeps, reason: string): Promise<ReconcileOutcome> {
  const { archive, persistence } = deps;
  await removeOwnEntries(archive, operation.conversationId, operation.id, operation.labels);
  await persistence.recordOperation({
    id: operation.id,
    conversationId: operation.conversationId,
    status: 'rolled_back',
    messageIds: operation.messageIds,
    labels: operation.labels,
    error: `reconciled: ${reason}`,
  });
  return { operationId: operation.id, conversationId: operation.conversationId, action: 'rolled_back', reason };
}

/** Finish or undo one pending operation. */
export async function reconcileOperation(operation: CompactionOperation, deps: ReconcileDeps): Promise<ReconcileOutcome> {
  if (operation.kind === 'erase') {
    const erased = await finishErase(operation, deps);
    const kept = erased.live.messagesKept > 0 ? `; ${erased.live.messagesKept} messages appended since it was asked for kept` : '';
    const reason = `finished an interrupted erase: ${erased.archive.entries} archive entries and ${erased.live.messages} live rows removed${kept}`;
    return { operationId: operation.id, conversationId: operation.conversationId, action: 'committed', reason };
  }
  if (operation.status !== 'archived') return undo(operation, deps, `stopped while ${operation.status}`);
  if (operation.kind === 'clear_tool_outputs') {
    const problem = await finishClearing(operation, deps);
    if (problem) return undo(operation, deps, problem);
    return { operationId: operation.id, conversationId: operation.conversationId, action: 'committed', reason: 'every tool output was archived and read back' };
  }
  const entries = splitOperationEntries(operation, await deps.archive.read(operation.conversationId, operation.labels));
  const live = (await deps.persistence.loadHistory(operation.conversationId)).filter((m) => m.kind !== 'clip_archive');
  // Messages whose output tier 2 cleared are archived from their tool_output entries.
  const wanted = new Set(operation.messageIds);
  const clearedLabels = live.filter((m) => wanted.has(m.id) && m.clearedOutputLabel !== undefined).map((m) => m.clearedOutputLabel!);
  const toolOutputs = clearedLabels.length > 0 ? await deps.archive.read(operation.conversationId, clearedLabels) : [];
  const problem = unfinishableReason(operation, entries.archived, live, toolOutputs);
  return problem ? undo(operation, deps, problem) : finish(operation, deps, entries, live);
}

/** Every pending operation of one conversation, oldest first. Hold the conversation's lock. */
export async function reconcileConversation(conversationId: string, deps: ReconcileDeps): Promise<ReconcileOutcome[]> {
  const pending = await deps.persistence.listPendingOperations(conversationId);
  // An erase removes every other operation of the conversation: undoing those first would only write rows it deletes.
  const erase = pendingErase(pending);
  if (erase !== undefined) return [await reconcileOperation(erase, deps)];
  const outcomes: ReconcileOutcome[] = [];
  for (const operation of pending) {
    outcomes.push(await reconcileOperation(operation, deps));
  }
  return outcomes;
}

/**
 * Every pending operation of the namespace, each conversation under its lock. A conversation whose lock
 * is held is being compacted right now, by this process or another: its operations are left to it.
 */
export async function reconcileAll(deps: ReconcileDeps): Promise<ReconcileOutcome[]> {
  const pending = await deps.persistence.listPendingOperations();
  const conversations = [...new Set(pending.map((op) => op.conversationId))];
  const outcomes: ReconcileOutcome[] = [];
  for (const conversationId of conversations) {
    const locked = await deps.persistence.withConversationLock(conversationId, () => reconcileConversation(conversationId, deps));
    if (locked.acquired) outcomes.push(...locked.value);
    else {
      for (const op of pending.filter((p) => p.conversationId === conversationId)) {
        outcomes.push({ operationId: op.id, conversationId, action: 'busy', reason: 'another compaction holds the conversation' });
      }
    }
  }
  return outcomes;
}

/** Finish or undo the conversation's interrupted operations and report each (`reconciled`). The caller holds the lock. */
export async function reconcileAndReport(
  conversationId: string,
  deps: ReconcileDeps & { emit: (event: CompactionEvent) => void },
): Promise<ReconcileOutcome[]> {
  const outcomes = await reconcileConversation(conversationId, deps);
  for (const outcome of outcomes) deps.emit({ type: 'reconciled', ...outcome });
  return outcomes;
}
