/**
 * The deadline of a wait for a conversation's lock, shared by every PersistenceProvider adapter. A holder that never
 * lets go (a frozen process, a hung call) must not hold its waiters forever: each wait ends at `timeoutMs` (default
 * `DEFAULT_LOCK_WAIT_MS`) or when the caller's `signal` aborts, with a `busy` error that names the conversation, how
 * long it waited and who held the lock.
 */
import { checkDurationMs } from '../duration-ms.js';
import { MemfoldError } from '../errors.js';

/**
 * How long a wait for a conversation's lock lasts unless the caller says otherwise: longer than a compaction with a
 * remote model takes (a few model calls), short enough that a frozen holder is reported within a minute.
 */
export const DEFAULT_LOCK_WAIT_MS = 60_000;

/** How a caller waits for a conversation's lock (`withConversationLock`). */
export interface LockWaitOptions {
  /** Wait for the lock when another holder has it; default false (answer `{ acquired: false }` at once). */
  wait?: boolean;
  /** Stops the wait (never `fn` once it runs): the call rejects with a `busy` error naming the holder. */
  signal?: AbortSignal;
  /** Milliseconds to wait at most, 0 to 2,147,483,647; default `DEFAULT_LOCK_WAIT_MS` (60,000). */
  timeoutMs?: number;
  /** What this caller is, as a waiter's error names the holder (e.g. `an erase`). Default `another caller`. */
  purpose?: string;
}

/** Refuses a timeout that is not a whole number of milliseconds a timer can keep, naming `field`. */
export function checkLockTimeout(value: unknown, field: string): void {
  if (value === undefined) return;
  checkDurationMs(value, field, { integer: true });
}

export interface LockWait {
  /** Aborts at the deadline or with the caller's signal. */
  readonly signal: AbortSignal;
  /** Milliseconds until the deadline (at least 1 while it has not passed). */
  remainingMs(): number;
  /** The error to give up with, `holder` named as well as is known (`PostgreSQL backend pid 123`...). */
  giveUp(holder: string | undefined): MemfoldError;
  /** Clears the timer; call when the wait is over, however it ended. */
  dispose(): void;
}

/** Starts the deadline of one wait for `conversationId`'s lock. */
export function startLockWait(conversationId: string, options: Pick<LockWaitOptions, 'signal' | 'timeoutMs'>, now: () => number = Date.now): LockWait {
  checkLockTimeout(options.timeoutMs, 'lockTimeoutMs');
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_WAIT_MS;
  const started = now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  timer.unref?.();
  const onAbort = () => controller.abort();
  if (options.signal?.aborted) controller.abort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    remainingMs: () => Math.max(1, timeoutMs - (now() - started)),
    giveUp(holder) {
      const waitedMs = Math.max(0, Math.round(now() - started));
      const why = timedOut ? `gave up after lockTimeoutMs (${timeoutMs} ms)` : 'the caller aborted the wait';
      return new MemfoldError(
        'busy',
        `Conversation ${JSON.stringify(conversationId)}: waited ${waitedMs} ms for the conversation's lock held by ${holder ?? 'another caller'}; ${why}. Retry later, or find what holds the lock`,
        { retryable: true, details: { conversationId, waitedMs, holder: holder ?? null, reason: timedOut ? 'lock_timeout' : 'aborted' } },
      );
    },
    dispose() {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    },
  };
}
