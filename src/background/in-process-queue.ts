/**
 * Background compaction inside this process (p-queue), for the embedded default: PGlite admits one process, so no
 * worker elsewhere could open the store. Same rules as the pg-boss queue: per conversation at most one job waiting
 * (and one running); a failed compaction is retried with a doubling delay (unless a model or embedding client already
 * retried the failing call: `jobRetryable`), then given up, its outcome reported.
 */
import PQueue from 'p-queue';
import type { CompactionResult } from '../compaction/compaction-result.js';
import { jobRetryable, outcomeOf, type CompactionQueue, type JobOutcome } from './compaction-queue.js';
import { JOB_DEFAULTS } from './job-defaults.js';

export interface InProcessQueueOptions {
  /** Compactions running at once, over all conversations. Default `JOB_DEFAULTS.inProcessConcurrency`. */
  concurrency?: number;
  retryLimit?: number;
  /** First retry delay; doubled each time. */
  retryDelayMs?: number;
  /** Told what each job did, after its last attempt. */
  onOutcome?: (outcome: JobOutcome) => void;
  /** Waits a retry delay. Default: a timer. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Resolves when `close(waitMs)`'s `waitMs` is up. `signal` aborts when the jobs finish first: the timer should then
   * stop (so it does not hold the process open). Default: a timer.
   */
  closeTimer?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const sleepWithTimer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function timerUntilAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

export function createInProcessQueue(run: (conversationId: string) => Promise<CompactionResult>, options: InProcessQueueOptions = {}): CompactionQueue {
  const queue = new PQueue({ concurrency: options.concurrency ?? JOB_DEFAULTS.inProcessConcurrency });
  const waiting = new Set<string>();
  const retryLimit = options.retryLimit ?? JOB_DEFAULTS.retries;
  const retryDelayMs = options.retryDelayMs ?? JOB_DEFAULTS.retryDelaySeconds * 1000;
  const sleep = options.sleep ?? sleepWithTimer;
  const closeTimer = options.closeTimer ?? timerUntilAborted;
  let jobs = 0;
  let closing = false;

  async function runJob(conversationId: string, jobId: string): Promise<void> {
    waiting.delete(conversationId);
    for (let attempt = 0; ; attempt++) {
      const outcome = outcomeOf(await run(conversationId), conversationId, jobId, attempt);
      if (!jobRetryable(outcome) || attempt >= retryLimit) {
        options.onOutcome?.(outcome);
        return;
      }
      await sleep(retryDelayMs * 2 ** attempt);
    }
  }

  return {
    engine: 'in-process',
    async enqueue(conversationId) {
      if (closing) return { conversationId, queued: false, engine: 'in-process' };
      if (waiting.has(conversationId)) return { conversationId, queued: false, engine: 'in-process' };
      waiting.add(conversationId);
      const jobId = `local-${++jobs}`;
      // The job never rejects: run() does not throw (a CompactionResult says what happened).
      void queue.add(() => runJob(conversationId, jobId));
      return { conversationId, queued: true, jobId, engine: 'in-process' };
    },
    async close(waitMs) {
      // Jobs waiting or running get waitMs to finish (their messages stay live either way); then the rest is dropped.
      closing = true;
      const done = new AbortController();
      await Promise.race([queue.onIdle(), closeTimer(waitMs, done.signal)]);
      done.abort();
      queue.clear();
      waiting.clear();
    },
  };
}
