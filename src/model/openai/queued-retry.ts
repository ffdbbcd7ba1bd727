/**
 * The one way remote calls run: each attempt through the shared queue, failures turned into
 * MemfoldErrors (the adapter decides retryability), one retry loop around it all.
 */
import type { MemfoldErrorCode } from '../../errors.js';
import type { ModelQueue } from '../model-queue.js';
import { RETRY_BACKOFF, retryWithBackoff, type RetryOptions } from '../retry.js';
import { toMemfoldError } from './openai-errors.js';

/** Retry settings a caller may override (tests inject time here). */
export type RetryOverrides = Partial<Pick<RetryOptions, 'initialDelayMs' | 'maxDelayMs' | 'deadlineMs' | 'sleep' | 'random' | 'clock'>>;

export function runQueuedWithRetry<T>(
  attempt: () => Promise<T>,
  context: { queue: ModelQueue; id: string; errorCode: MemfoldErrorCode; maxRetries: number; retry?: RetryOverrides; signal?: AbortSignal },
): Promise<T> {
  const { queue, id, errorCode, signal } = context;
  const once = (): Promise<T> =>
    queue.run(attempt, signal).catch((error: unknown) => {
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
