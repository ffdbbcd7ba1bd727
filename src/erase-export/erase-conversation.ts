/**
 * Erasing a conversation from both stores, journaled like a compaction so that a crash never leaves half of it.
 *
 * An erase removes what the conversation held when it was asked for, never a message acknowledged after. Under the
 * conversation's lock (so an erase never interleaves with a compaction): an `erase` operation is recorded first, and
 * the store records with it the conversation's last seq, the erase's boundary; then the archive is purged (every
 * entry of every kind, physically: `Archive.eraseConversation`); then one transaction deletes the live-store rows of
 * the conversation up to the boundary, the erase's own journal row included, keeping the messages appended after it
 * (and the conversation row, when there are any), but for tool results answering a call it removed: a tool group is
 * never split, and a result kept without its call would answer nothing. Until that transaction commits the operation
 * stays pending, and reconcile (on open, before the conversation's next compaction, `memfold reconcile`) runs the same
 * two steps again with the same boundary: an erase is always rolled forward, never undone. Both steps are idempotent.
 *
 * Every archive entry of the conversation predates the boundary: the archive is written only by compactions, which
 * take the same lock and finish a pending erase first. So the purge removes all of them, and the messages kept are
 * live. Appends are not locked out: one that lands while the erase runs gets a seq past the boundary and is kept.
 */
import { randomUUID } from 'node:crypto';
import type { Archive, ArchiveErasure } from '../archive/archive.js';
import { eraseArchived } from '../archive/erase-archived.js';
import { requireText } from '../conversation/text.js';
import { errorMessage, MemfoldError } from '../errors.js';
import type { CompactionOperation, ConversationErasure, PersistenceProvider } from '../persistence/persistence-provider.js';

export interface EraseDeps {
  archive: Archive;
  persistence: PersistenceProvider;
  /** Id of the erase operation. Default `erase-` and a random UUID. */
  newId?: () => string;
  /** Default `Date.now`. */
  now?: () => number;
}

/** What an erase did: `not_found` when neither store held anything of the conversation (nothing was written). */
export type EraseResult =
  | {
      status: 'erased';
      conversationId: string;
      /** The journal row that made the erase crash-safe (deleted with the rest). */
      operationId: string;
      archive: ArchiveErasure;
      live: ConversationErasure;
      durationMs: number;
    }
  | { status: 'not_found'; conversationId: string };

const isPending = (operation: CompactionOperation) => operation.status === 'planned' || operation.status === 'archived';

/** The conversation's interrupted erase, if one is pending. */
export function pendingErase(operations: readonly CompactionOperation[]): CompactionOperation | undefined {
  return operations.find((operation) => operation.kind === 'erase' && isPending(operation));
}

/** Run (or run again) the two steps of a recorded erase, up to its boundary. The caller holds the conversation's lock. */
export async function finishErase(operation: CompactionOperation, deps: EraseDeps): Promise<Extract<EraseResult, { status: 'erased' }>> {
  const now = deps.now ?? Date.now;
  const started = now();
  const { conversationId } = operation;
  const archive = await eraseArchived(deps.archive, conversationId);
  // An erase journaled before the boundary was recorded (migration 013) removes every message, as it was asked to.
  const live = await deps.persistence.eraseConversation(
    conversationId,
    operation.eraseThroughSeq === undefined ? {} : { throughSeq: operation.eraseThroughSeq },
  );
  return { status: 'erased', conversationId, operationId: operation.id, archive, live, durationMs: now() - started };
}

/** Finish `operation`, an erase recorded earlier (by this call or one that failed), naming it when a store fails. */
async function finishOrExplain(operation: CompactionOperation, deps: EraseDeps): Promise<Extract<EraseResult, { status: 'erased' }>> {
  try {
    return await finishErase(operation, deps);
  } catch (error) {
    throw new MemfoldError(
      MemfoldError.isInstance(error) ? error.code : 'persistence_error',
      `Erase of conversation ${JSON.stringify(operation.conversationId)} stopped part-way (${errorMessage(error)}); it is journaled as operation ${operation.id} and the next reconcile finishes it`,
      { cause: error, details: { operationId: operation.id } },
    );
  }
}

async function eraseLocked(deps: EraseDeps, conversationId: string): Promise<EraseResult> {
  let operations = await deps.persistence.listOperations(conversationId);
  const pending = pendingErase(operations);
  let earlier: Extract<EraseResult, { status: 'erased' }> | undefined;
  if (pending !== undefined) {
    // An erase asked for before, up to its own boundary; what was appended since is this request's to erase.
    earlier = await finishOrExplain(pending, deps);
    operations = await deps.persistence.listOperations(conversationId);
  }
  // Every archive write is journaled first, so a conversation with no operation and no live row has nothing archived.
  if (operations.length === 0 && (await deps.persistence.loadHistory(conversationId)).length === 0) {
    return earlier ?? { status: 'not_found', conversationId };
  }
  const id = (deps.newId ?? (() => `erase-${randomUUID()}`))();
  await deps.persistence.recordOperation({ id, conversationId, kind: 'erase', status: 'planned', messageIds: [], labels: [] });
  // Read back: the store recorded the erase's boundary with it.
  const operation = (await deps.persistence.listOperations(conversationId)).find((recorded) => recorded.id === id);
  if (operation === undefined)
    throw new MemfoldError('persistence_error', `The erase of conversation ${JSON.stringify(conversationId)} was recorded as ${id} but cannot be read back`);
  return finishOrExplain(operation, deps);
}

/** How `eraseConversation` waits for the conversation's lock. */
export interface EraseOptions {
  /** Stops the wait for the lock (a `busy` error naming the holder); an erase that began runs to its end. */
  signal?: AbortSignal;
  /** Milliseconds to wait for the lock at most. Default `DEFAULT_LOCK_WAIT_MS` (60,000). */
  lockTimeoutMs?: number;
}

/**
 * Erase the conversation from both stores, waiting for its lock (a compaction running finishes first) for at most
 * `lockTimeoutMs` or until `signal` aborts: then a `busy` MemfoldError names the conversation, how long it waited and
 * the holder, and nothing was written. Throws `InvalidArgumentError` naming `conversationId` for a bad id (and
 * `lockTimeoutMs` for a bad timeout), and a `MemfoldError` when a store fails part-way (the erase stays journaled and
 * is finished by the next reconcile).
 */
export async function eraseConversation(deps: EraseDeps, conversationId: string, options: EraseOptions = {}): Promise<EraseResult> {
  requireText(conversationId, 'conversationId');
  const locked = await deps.persistence.withConversationLock(conversationId, () => eraseLocked(deps, conversationId), {
    wait: true,
    purpose: 'an erase',
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.lockTimeoutMs !== undefined ? { timeoutMs: options.lockTimeoutMs } : {}),
  });
  if (!locked.acquired) throw new MemfoldError('persistence_error', `Could not lock conversation ${JSON.stringify(conversationId)} to erase it`);
  return locked.value;
}
