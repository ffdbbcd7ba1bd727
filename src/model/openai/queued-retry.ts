/**
 * The one way remote calls run: each attempt through the shared queue, failures turned into
 * MemfoldErrors (the adapter decides retryability), one retry loop around it all.
 */
import type { MemfoldErrorCode } from '../../errors.js';
import type { ModelQueue } from '../model-queue.js';
import { RETRY_BACKOFF, deadlineExceeded, retryWithBackoff, type RetryOptions } from '../retry.js';
import { toMemfoldError } from './openai-errors.js';

/** Retry settings a caller may override (tests inject time here). */
export type RetryOverrides = Partial<Pick<RetryOptions, 'initialDelayMs' | 'maxDelayMs' | 'deadlineMs' | 'sleep' | 'random' | 'clock'>>;

/**
 * `attempt` runs inside a queue slot and gets the ms left before the deadline (Infinity without one), read
 * once the slot is free, so it can cap its request timeout; with no time left it is not started at all.
 */
export function runQueuedWithRetry<T>(
  attempt: (remainingMs: number) => Promise<T>,
  context: { queue: ModelQueue; id: string; errorCode: MemfoldErrorCode; maxRetries: number; retry?: RetryOverrides; signal?: AbortSignal },
): Promise<T> {
  const { queue, id, errorCode, signal } = context;
  const once = (_attempt: number, remainingMs: () => number): Promise<T> =>
    queue
      .run(async () => {
        const remaining = remainingMs();
        if (remaining <= 0) throw deadlineExceeded(errorCode, id);
        return attempt(remaining);
      }, signal)
      .catch((error: unknown) => {
        throw toMemfoldError(error, errorCode, id, signal);
      });
  return retryWithBackoff(once, {
    initialDelayMs: RETRY_BACKOFF.initialDelayMs,
    maxDelayMs: RETRY_BACKOFF.maxDelayMs,
    ...context.retry,
    maxRetries: context.maxRetries,
    label: id,
    errorCode,
    ...(signal ? { signal } : {}),
  });
}
