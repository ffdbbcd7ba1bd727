/**
 * The queue every remote model and embedding call goes through: bounded concurrency and, optionally,
 * a rate limit (at most `intervalCap` calls started per `interval` ms) or an admission step run in each
 * task's slot before it starts (a rate limit shared by processes, `shared-rate-limit.ts`). One queue is shared
 * by the chat and embeddings adapters of a memfold, so `concurrency` bounds their requests together.
 */
import PQueue from 'p-queue';
import { InvalidArgumentError } from '../errors.js';
import { createPacing, type PacingOptions } from './openai-pacing.js';
import type { AdmissionStep } from './shared-rate-limit.js';

export interface ModelQueueOptions {
  /** Calls in flight at once (RuntimeConfig.modelConcurrency). */
  concurrency: number;
  /** Calls started per `interval` (a sliding window); unset means no rate limit. */
  intervalCap?: number;
  /** Length of the rate-limit window in ms; required with `intervalCap`. */
  interval?: number;
  /**
   * Run in the task's slot right before it starts, with the task's AbortSignal: the task starts when it resolves
   * and fails with its error when it rejects (e.g. `sharedRateGate`, which waits for a start slot).
   */
  admit?: AdmissionStep;
  /**
   * Without `intervalCap` nor `admit`, the queue learns a pace from the server's 429s (`openai-pacing.ts`); the clock
   * and timer it uses (tests inject them). `false`: never paced.
   */
  pacing?: PacingOptions | false;
}

export interface RunOptions {
  /** Skip the admission step: the task keeps the start slot an earlier attempt was admitted to (see `runQueuedWithRetry`). */
  admitted?: boolean;
}

/** The few members memfold uses; a thin wrapper over p-queue. */
export interface ModelQueue {
  /**
   * Run `task` when a slot is free (and the admission step, if any, lets it start). A task whose `signal` aborts
   * while waiting is dropped with an error.
   */
  run<T>(task: () => Promise<T>, signal?: AbortSignal, options?: RunOptions): Promise<T>;
  /** Tasks running now. */
  readonly pending: number;
  /** Tasks waiting for a slot. */
  readonly size: number;
  onIdle(): Promise<void>;
}

/**
 * Queue options for a requests-per-minute limit: one request started every 60,000 / rpm ms. Spread evenly
 * rather than `rpm` per 60-second window, because servers refill their limit continuously (tokens per
 * second): a fixed minute window would start the whole minute's requests at once and meet 429s.
 */
export function rateLimitedQueueOptions(concurrency: number, requestsPerMinute?: number): ModelQueueOptions {
  if (requestsPerMinute === undefined) return { concurrency };
  if (!Number.isInteger(requestsPerMinute) || requestsPerMinute < 1) {
    throw new InvalidArgumentError('queue.requestsPerMinute', `must be an integer >= 1 (got ${requestsPerMinute})`);
  }
  return { concurrency, intervalCap: 1, interval: 60_000 / requestsPerMinute };
}

export function createModelQueue(options: ModelQueueOptions): ModelQueue {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new InvalidArgumentError('queue.concurrency', `must be an integer >= 1 (got ${options.concurrency})`);
  }
  const limited = options.intervalCap !== undefined;
  if (limited && (!Number.isInteger(options.intervalCap) || options.intervalCap! < 1)) {
    throw new InvalidArgumentError('queue.intervalCap', `must be an integer >= 1 (got ${options.intervalCap})`);
  }
  if (limited && (options.interval === undefined || !(options.interval > 0))) {
    throw new InvalidArgumentError('queue.interval', 'must be a positive number of ms when intervalCap is set');
  }
  const queue = new PQueue({
    concurrency: options.concurrency,
    // Strict (a sliding window): a fixed window lets a start at its end and one at the next one's start
    // land together, which a server counting per second answers with 429.
    ...(limited ? { intervalCap: options.intervalCap!, interval: options.interval!, strict: true } : {}),
  });
  const { admit } = options;
  // A set rate (local or shared) keeps its meaning: the queue learns a pace only when it has none.
  const pacing = limited || admit || options.pacing === false ? undefined : createPacing(options.pacing);
  const start = async <T>(task: () => Promise<T>, signal?: AbortSignal, runOptions?: RunOptions): Promise<T> => {
    if (admit && !runOptions?.admitted) await admit(signal);
    if (!pacing) return task();
    const startedAt = await pacing.admit(signal);
    return task().then(
      (value) => {
        pacing.settle(startedAt);
        return value;
      },
      (error: unknown) => {
        pacing.settle(startedAt, error);
        throw error;
      },
    );
  };
  return {
    run: <T>(task: () => Promise<T>, signal?: AbortSignal, runOptions?: RunOptions) =>
      queue.add(() => start(task, signal, runOptions), signal ? { signal } : {}),
    get pending() {
      return queue.pending;
    },
    get size() {
      return queue.size;
    },
    onIdle: () => queue.onIdle(),
  };
}
