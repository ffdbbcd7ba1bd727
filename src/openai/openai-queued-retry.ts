/**
 * The one way remote calls run: each attempt through the shared queue, failures turned into
 * MemfoldErrors (the adapter decides retryability), one retry loop around it all.
 */
import type { MemfoldErrorCode } from '../errors.js';
import { circuitOpenError, type CircuitBreaker } from './openai-circuit-breaker.js';
import type { ModelQueue } from './openai-queue.js';
import { RETRY_BACKOFF, deadlineExceeded, isRateLimited, retryWithBackoff, type RetryOptions } from './openai-retry.js';
import { toMemfoldError } from './openai-errors.js';

/** Retry settings a caller may override (tests inject time here). */
export type RetryOverrides = Partial<Pick<RetryOptions, 'initialDelayMs' | 'maxDelayMs' | 'deadlineMs' | 'sleep' | 'random' | 'clock'>>;

/**
 * `attempt` runs inside a queue slot and gets the ms left before the deadline (Infinity without one), read
 * once the slot is free, so it can cap its request timeout; with no time left it is not started at all.
 * With a `breaker`, an attempt the open circuit refuses is not sent and fails at once (not retryable).
 */
export function runQueuedWithRetry<T>(
  attempt: (remainingMs: number) => Promise<T>,
  context: {
    queue: ModelQueue;
    id: string;
    errorCode: MemfoldErrorCode;
    maxRetries: number;
    retry?: RetryOverrides;
    signal?: AbortSignal;
    breaker?: CircuitBreaker;
  },
): Promise<T> {
  const { queue, id, errorCode, signal, breaker } = context;
  // A 429 right after an admitted start means the start reached the provider a little early (a shared limit spaces
  // starts, and timers, event loops and the network add jitter): its one retry, after the wait the provider asks,
  // keeps that start slot instead of queuing for the next, so jitter costs a few ms, not a slot. Once only: a second
  // 429 means others use the limit too, and the retry reserves again.
  let keepSlot = false;
  let keptSlot = false;
  const once = (_attempt: number, remainingMs: () => number): Promise<T> => {
    const admitted = keepSlot && !keptSlot;
    keptSlot ||= admitted;
    keepSlot = false;
    return queue
      .run(
        async () => {
          const remaining = remainingMs();
          if (remaining <= 0) throw deadlineExceeded(errorCode, id);
          // Mapped before the breaker sees it: it counts outages by their short reason.
          const send = () =>
            attempt(remaining).catch((error: unknown) => {
              throw toMemfoldError(error, errorCode, id, signal);
            });
          // Asked in the slot, when the request would leave: calls queued behind hanging ones are refused at once.
          return breaker ? breaker.run(send, (retryInMs) => circuitOpenError(errorCode, id, retryInMs)) : send();
        },
        signal,
        { admitted },
      )
      .catch((error: unknown) => {
        const failure = toMemfoldError(error, errorCode, id, signal);
        keepSlot = isRateLimited(failure);
        throw failure;
      });
  };
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
