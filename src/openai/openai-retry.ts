/**
 * The one retry loop of memfold, used at the remote-call edge (model and embedding adapters).
 * Exponential backoff with full jitter, `retry-after` / `retry-after-ms` honoured (capped), a deadline,
 * and a final error that keeps every attempt. Time is injected (`sleep`, `clock`, `random`) so tests run instantly.
 * Never stack it on another retry loop: the `openai` client is built with `maxRetries: 0`.
 */
import { MemfoldError, errorMessage, failureReason, type MemfoldErrorCode } from '../errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (0 = one attempt). */
  maxRetries: number;
  /** Upper bound of the first backoff; attempt k waits a random share of `initialDelayMs * 2^(k-1)`. */
  initialDelayMs: number;
  /** No backoff (nor honoured retry-after) exceeds this. */
  maxDelayMs: number;
  /**
   * Total budget in ms from the first attempt: no retry starts (or sleeps) past it, and each attempt is told
   * the time left (`fn`'s second argument) so it can cap its own timeout. Unset: no deadline.
   */
  deadlineMs?: number;
  /** Waits `ms`; must reject when `signal` aborts. Default: a timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1). Default: Math.random. */
  random?: () => number;
  /** Milliseconds now. Default: Date.now. */
  clock?: () => number;
  signal?: AbortSignal;
  /** Code of the error thrown when giving up. Default `model_error`. */
  errorCode?: MemfoldErrorCode;
  /** Names the call in the final message, e.g. `openai:gpt-4o-mini`. */
  label?: string;
}

/** Backoff used by the adapters unless the caller overrides it. */
export const RETRY_BACKOFF = Object.freeze({ initialDelayMs: 500, maxDelayMs: 20_000 });

/** One failed attempt, as kept in the final error's `details.attempts`. */
export interface AttemptRecord {
  attempt: number;
  message: string;
  /** Short reason given by the adapter (`http 500`, `timeout`, ...). */
  reason: string;
  retryable: boolean;
  /** The wait before the next attempt, when there was one. */
  delayMs?: number;
}

export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(signal: AbortSignal): MemfoldError {
  return new MemfoldError('model_error', 'aborted', { cause: signal.reason, details: { reason: 'aborted' } });
}

/** The short reason of a failure stopped by the deadline; the last attempt's reason follows in parentheses. */
export const DEADLINE_REASON = 'deadline exceeded';

/** Thrown by an attempt that finds no time left before it starts (e.g. after waiting in the queue). */
export function deadlineExceeded(code: MemfoldErrorCode, label: string): MemfoldError {
  return new MemfoldError(code, `${label}: ${DEADLINE_REASON} before the request started`, { retryable: false, details: { reason: DEADLINE_REASON } });
}

function isRetryable(error: unknown): boolean {
  return MemfoldError.isInstance(error) && error.retryable;
}

type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The wait a server asked for, in ms: `retry-after-ms`, else `retry-after` (seconds or an HTTP date).
 * Read from `details.retryAfterMs`, `details.headers`, or the `headers` of the error or its cause.
 */
export function retryAfterMs(error: unknown, now: number): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { details?: Record<string, unknown>; headers?: HeaderSource; cause?: { headers?: HeaderSource } };
  const given = e.details?.['retryAfterMs'];
  if (typeof given === 'number' && Number.isFinite(given)) return Math.max(0, given);
  const headers = (e.details?.['headers'] as HeaderSource | undefined) ?? e.headers ?? e.cause?.headers;
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = header(headers, 'retry-after');
  if (after === undefined || after.trim() === '') return undefined;
  if (Number.isFinite(Number(after))) return Math.max(0, Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Refusals by a rate limit that name their wait (HTTP 429 with `retry-after`) a call may meet beyond `maxRetries`
 * (when that is above 0): a queue pacing many calls meets them in bursts while it learns the provider's rate
 * (`openai-pacing.ts`), and a call refused three times there fell back to the offline summary although the provider
 * only asked it to wait (100 compactions at once against a limit of 20 a second: 0-9 fallbacks a run). Bounded, so a
 * limit that never clears (an exhausted quota) still ends the call.
 */
export const EXTRA_RATE_LIMIT_RETRIES = 4;

/** A refusal by a rate limit (HTTP 429). */
export function isRateLimited(error: unknown): boolean {
  return MemfoldError.isInstance(error) && error.details['status'] === 429;
}

/**
 * Run `fn` until it succeeds, it throws a non-retryable error, retries run out, the deadline passes or
 * `signal` aborts. Only MemfoldErrors with `retryable: true` are retried. `fn` gets the attempt number and
 * `remainingMs()`, the time left before the deadline (Infinity without one), read when it actually starts.
 * Gives up with a MemfoldError (`errorCode`, default `model_error`) whose `details` hold `attempts` (every
 * attempt's record), `reason` (the last attempt's short reason; `deadline exceeded (<it>)` when the deadline
 * stopped it) and `status` when known; `retryable` is false (the retries are spent).
 */
export async function retryWithBackoff<T>(fn: (attempt: number, remainingMs: () => number) => Promise<T>, options: RetryOptions): Promise<T> {
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const clock = options.clock ?? Date.now;
  const code = options.errorCode ?? 'model_error';
  const label = options.label ? `${options.label}: ` : '';
  const start = clock();
  const deadlineMs = options.deadlineMs;
  const remainingMs = (): number => (deadlineMs === undefined ? Infinity : deadlineMs - (clock() - start));
  const attempts: AttemptRecord[] = [];
  let pacedRefusals = 0;

  const giveUp = (stoppedBy: string, last: unknown): MemfoldError => {
    const lastMessage = errorMessage(last);
    const lastReason = failureReason(last);
    // An attempt that found no time left (`deadlineExceeded`) was stopped by the deadline too.
    const why = lastReason === DEADLINE_REASON ? 'deadline' : stoppedBy;
    // The caller's fallback reports this reason: say that the deadline ended it, and after what.
    const reason = why === 'deadline' && lastReason !== DEADLINE_REASON ? `${DEADLINE_REASON} (${lastReason})` : lastReason;
    const details: Record<string, unknown> = { attempts, reason, stoppedBy: why };
    if (MemfoldError.isInstance(last) && last.details['status'] !== undefined) details['status'] = last.details['status'];
    const count = `${attempts.length} attempt${attempts.length === 1 ? '' : 's'}`;
    return new MemfoldError(code, `${label}failed after ${count} (${why}): ${lastMessage}`, { cause: last, details });
  };

  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw giveUp('aborted', abortError(options.signal));
    try {
      return await fn(attempt, remainingMs);
    } catch (error) {
      const record: AttemptRecord = { attempt, message: errorMessage(error), reason: failureReason(error), retryable: isRetryable(error) };
      attempts.push(record);
      if (options.signal?.aborted) throw giveUp('aborted', error);
      if (!record.retryable) throw giveUp('not retryable', error);
      const now = clock();
      const asked = retryAfterMs(error, now);
      if (asked !== undefined && isRateLimited(error)) pacedRefusals++;
      const extra = options.maxRetries > 0 ? Math.min(pacedRefusals, EXTRA_RATE_LIMIT_RETRIES) : 0;
      if (attempt > options.maxRetries + extra) throw giveUp('retries exhausted', error);
      const backoff = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** (attempt - 1));
      const delay = asked !== undefined ? Math.min(asked, options.maxDelayMs) : Math.floor(random() * backoff);
      if (deadlineMs !== undefined && now - start + delay >= deadlineMs) throw giveUp('deadline', error);
      record.delayMs = delay;
      try {
        await sleep(delay, options.signal);
      } catch (sleepError) {
        throw giveUp('aborted', sleepError);
      }
    }
  }
}
