/**
 * The pace a model queue learns from the server's 429s when no rate is set for it (`modelRequestsPerMinute`).
 * Without one, a queue of 16 against a limit of 20 a second sends 16 at once; every refused request is told the same
 * short wait, so they come back together, are refused again and spend their retries. A 429 with a wait therefore
 * holds every new start of the queue until that wait is over, and from then on starts are spaced: one per learned
 * interval, so the refused return one after another. The interval is the wait of the first 429 (for a bucket that
 * refills continuously, the time to its next token), grown by a quarter for each 429 met at that pace (at most once
 * per interval, so a herd refused together counts once) and shrunk by 1/64 for each answer that was not refused, so
 * the pace keeps probing toward the limit; under 1 ms it is dropped. An additive-increase, multiplicative-decrease
 * loop on the rate, with no randomness: under an injected clock its starts are the same in every run.
 *
 * Hand-written: p-queue's own rate limit is fixed when the queue is built and cannot hold the queue for a wait.
 */
import { defaultSleep, retryAfterMs } from './openai-retry.js';
import { MemfoldError } from '../errors.js';

/** The longest learned interval: a `retry-after` of seconds holds the queue once, it does not pace it that slowly. */
export const MAX_LEARNED_INTERVAL_MS = 1_000;
/** A 429 at the learned pace widens the interval by this factor. */
const WIDEN = 1.25;
/** Each answer that was not refused narrows the interval by this share. */
const NARROW = 1 / 64;

export interface PacingOptions {
  /** Milliseconds now. Default: Date.now. */
  clock?: () => number;
  /** Waits `ms`; must reject when `signal` aborts. Default: a timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface Pacing {
  /** Waits, in the task's slot, until the task may start; returns when it started (the clock's ms). */
  admit(signal?: AbortSignal): Promise<number>;
  /** The task started at `startedAt` ended with `error` (undefined: it succeeded). */
  settle(startedAt: number, error?: unknown): void;
  /** The spacing between starts now (0: none). */
  readonly intervalMs: number;
}

export function createPacing(options: PacingOptions = {}): Pacing {
  const clock = options.clock ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  let intervalMs = 0;
  /** No start before this: the end of the last 429's wait, or the last start plus the interval. */
  let nextStart = -Infinity;
  /** The end of the last 429's wait: a task that woke before it, reserved before the 429, waits again. */
  let holdUntil = -Infinity;
  /** When the interval last widened: a 429 of a request started then or before was sent at the old pace. */
  let widenedAt = -Infinity;
  return {
    async admit(signal) {
      for (;;) {
        const now = clock();
        const at = Math.max(now, nextStart);
        nextStart = at + intervalMs;
        if (at <= now) return now;
        await sleep(Math.ceil(at - now), signal);
        if (holdUntil <= at) return at;
      }
    },
    settle(startedAt, error) {
      if (error === undefined) {
        intervalMs = intervalMs * (1 - NARROW) < 1 ? 0 : intervalMs * (1 - NARROW);
        return;
      }
      if (!MemfoldError.isInstance(error) || error.details['status'] !== 429) return;
      const now = clock();
      const waitMs = retryAfterMs(error, now);
      if (waitMs === undefined) return;
      holdUntil = Math.max(holdUntil, now + waitMs);
      nextStart = Math.max(nextStart, holdUntil);
      if (startedAt <= widenedAt) return;
      widenedAt = now;
      const learned = intervalMs === 0 ? waitMs : intervalMs * WIDEN;
      intervalMs = Math.min(MAX_LEARNED_INTERVAL_MS, Math.max(1, learned));
    },
    get intervalMs() {
      return intervalMs;
    },
  };
}
