/**
 * A requests-per-minute limit shared by several processes: before each request starts, the gate reserves a start
 * slot from a shared store (injected: in memfold, a row in PostgreSQL keyed by endpoint) and waits until it. The
 * store spaces the slots, so processes that never talk to each other still start their requests one every
 * 60,000 / rpm ms between them, which a per-process limiter cannot do. The model queue runs the gate in a task's
 * slot, right before the task (`ModelQueueOptions.admit`).
 */
import { InvalidArgumentError, MemfoldError, errorMessage, failureReason } from '../errors.js';
import { defaultSleep } from './openai-retry.js';

/**
 * Reserve the next start of `key`, spaced `intervalMs` after the previous one; resolves the ms to wait for it, counted
 * from when it resolves (the reservation allows for its own round trip: `PersistenceProvider.reserveRateSlot`).
 */
export type ReserveRateSlot = (key: string, intervalMs: number) => Promise<number>;

/** Waits until the task may start; rejects when it may not (aborted, or no slot could be reserved). */
export type AdmissionStep = (signal?: AbortSignal) => Promise<void>;

export interface SharedRateGateOptions {
  /** The limit's name in the shared store: requests with the same key share one limit. */
  key: string;
  /** The provider's limit: starts per minute, over every process sharing `key`. */
  requestsPerMinute: number;
  reserve: ReserveRateSlot;
  /** Waits `ms`; must reject when `signal` aborts. Default: a timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The short reason of an attempt the gate stopped because no slot could be reserved. */
export const RATE_SLOT_UNAVAILABLE = 'rate limit unavailable';

/**
 * Ms between two reserved starts for a requests-per-minute limit: 60,000 / rpm, plus a small allowance for the
 * jitter between a slot and the request reaching the provider (timers, a busy event loop, the network): each request
 * is late by another amount, and a provider that allows no burst refuses one arriving even a millisecond sooner than
 * its limit allows after the one before. That jitter is a matter of milliseconds whatever the limit, so the allowance,
 * 2.5% of the interval and at most 10 ms, costs 1% of a limit of 60 a minute and less of slower ones; a start that
 * still arrives early is refused with the wait it needs, and its retry keeps its slot (`runQueuedWithRetry`), so a
 * wider allowance, paid on every start, is not needed.
 */
export function rateSlotSpacingMs(requestsPerMinute: number): number {
  if (!Number.isInteger(requestsPerMinute) || requestsPerMinute < 1) {
    throw new InvalidArgumentError('requestsPerMinute', `must be an integer >= 1 (got ${requestsPerMinute})`);
  }
  const intervalMs = 60_000 / requestsPerMinute;
  return intervalMs + Math.min(intervalMs * 0.025, MAX_JITTER_ALLOWANCE_MS);
}

/** The most a reserved start is spaced beyond the limit's interval, for jitter. */
export const MAX_JITTER_ALLOWANCE_MS = 10;

/**
 * The admission step of a shared limit. A reservation that fails gives a retryable MemfoldError (`details.reason`
 * `rate limit unavailable`): the request is not sent unlimited. An abort before the slot comes gives a
 * non-retryable one whose message says the wait for the slot was aborted; its slot stays used.
 */
export function sharedRateGate(options: SharedRateGateOptions): AdmissionStep {
  const { key, reserve } = options;
  const spacingMs = rateSlotSpacingMs(options.requestsPerMinute);
  const sleep = options.sleep ?? defaultSleep;
  const aborted = (signal: AbortSignal) =>
    new MemfoldError('model_error', `aborted while waiting for a start slot of the shared rate limit ${key}`, {
      cause: signal.reason,
      details: { reason: 'aborted' },
    });
  return async (signal) => {
    if (signal?.aborted) throw aborted(signal);
    let waitMs: number;
    try {
      waitMs = await reserve(key, spacingMs);
    } catch (error) {
      throw new MemfoldError(
        'model_error',
        `the shared rate limit ${key} could not reserve a start slot, so the request was not sent: ${errorMessage(error)}`,
        {
          cause: error,
          retryable: true,
          details: { reason: RATE_SLOT_UNAVAILABLE, cause: failureReason(error) },
        },
      );
    }
    if (signal?.aborted) throw aborted(signal);
    if (!(waitMs > 0)) return;
    // Whole ms, rounded up: never sooner than the slot.
    await sleep(Math.ceil(waitMs), signal).catch((error: unknown) => {
      throw signal?.aborted ? aborted(signal) : error;
    });
  };
}
