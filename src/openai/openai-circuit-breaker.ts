/**
 * Stops calling an endpoint that is down. A summary endpoint that accepts connections and never answers
 * costs the full deadline for every summary; after `failures` timeouts or connection errors in a row the
 * circuit opens and every call is refused at once for `cooldownMs`, so the fallback answers without waiting.
 * Then one trial call goes through (half-open): if it reaches the server the circuit closes, if it times out
 * or cannot connect the circuit opens for another cooldown. Calls refused meanwhile are not sent.
 *
 * Only outages count (`timeout`, `connection error`): a server that answers, even with an error, is reachable,
 * and its answer resets the count. An aborted call counts neither way.
 */
import { failureReason, InvalidArgumentError, MemfoldError, type MemfoldErrorCode } from '../errors.js';
import { checkDurationMs } from '../duration-ms.js';
import { DEFAULT_MODEL_BREAKER_COOLDOWN_MS, DEFAULT_MODEL_BREAKER_FAILURES } from './openai-defaults.js';

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Outages in a row that open the circuit. Default DEFAULT_MODEL_BREAKER_FAILURES (3); 0 never opens it. */
  failures?: number;
  /** How long an open circuit refuses calls before a trial. Default DEFAULT_MODEL_BREAKER_COOLDOWN_MS (60 s). */
  cooldownMs?: number;
  /** Milliseconds now. Default Date.now (tests inject one). */
  clock?: () => number;
}

export interface CircuitBreaker {
  /** `closed`, `open` (refusing), or `half-open` (the cooldown is over: the next call is a trial). */
  readonly state: CircuitState;
  /**
   * Run `call`, or, when the circuit refuses it, throw `refuse(retryInMs)` without calling. `call` must throw
   * errors whose `details.reason` is the adapter's short reason (`timeout`, `connection error`, ...).
   */
  run<T>(call: () => Promise<T>, refuse: (retryInMs: number) => Error): Promise<T>;
}

/** The short reason of a call the open circuit refused (what `withFallback` reports). */
export const CIRCUIT_OPEN_REASON = 'circuit open';

/** The error of a refused call: not retryable (retrying before the cooldown ends is refused again). */
export function circuitOpenError(code: MemfoldErrorCode, label: string, retryInMs: number): MemfoldError {
  const when = retryInMs > 0 ? `a trial call goes through in ${Math.ceil(retryInMs / 1000)} s` : 'a trial call is under way';
  return new MemfoldError(
    code,
    `${label}: ${CIRCUIT_OPEN_REASON}: the endpoint timed out or refused connections repeatedly, so it is not called for now (${when})`,
    {
      retryable: false,
      details: { reason: CIRCUIT_OPEN_REASON, retryInMs: Math.max(0, retryInMs) },
    },
  );
}

/** Short reasons (see `openai-errors.ts`) that say the server could not be reached in time. */
const OUTAGE_REASONS = new Set(['timeout', 'connection error']);

function isOutage(error: unknown): boolean {
  return OUTAGE_REASONS.has(failureReason(error));
}

function isAbort(error: unknown): boolean {
  return failureReason(error) === 'aborted';
}

export function createCircuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  const failures = options.failures ?? DEFAULT_MODEL_BREAKER_FAILURES;
  const cooldownMs = options.cooldownMs ?? DEFAULT_MODEL_BREAKER_COOLDOWN_MS;
  const clock = options.clock ?? Date.now;
  if (!Number.isInteger(failures) || failures < 0) throw new InvalidArgumentError('failures', `must be an integer >= 0 (got ${failures})`);
  checkDurationMs(cooldownMs, 'cooldownMs', { min: 1 });

  let outagesInARow = 0;
  /** When the open circuit admits its trial; undefined while closed. */
  let openUntil: number | undefined;
  let trialInFlight = false;

  const state = (): CircuitState => {
    if (openUntil === undefined) return 'closed';
    return clock() < openUntil ? 'open' : 'half-open';
  };

  return {
    get state() {
      return state();
    },
    async run(call, refuse) {
      const now = state();
      if (now === 'open') throw refuse(openUntil! - clock());
      // Half-open: one trial at a time; the others are refused until it settles.
      if (now === 'half-open' && trialInFlight) throw refuse(0);
      const trial = now === 'half-open';
      if (trial) trialInFlight = true;
      try {
        const result = await call();
        outagesInARow = 0;
        openUntil = undefined;
        return result;
      } catch (error) {
        if (isOutage(error)) {
          outagesInARow++;
          if (trial || (failures > 0 && outagesInARow >= failures)) openUntil = clock() + cooldownMs;
        } else if (!isAbort(error)) {
          // The server answered: it is reachable.
          outagesInARow = 0;
          openUntil = undefined;
        }
        throw error;
      } finally {
        if (trial) trialInFlight = false;
      }
    },
  };
}
