/**
 * A worker: takes compaction jobs of one namespace from pg-boss and runs them with an open memfold, any number of
 * processes or machines at once (pg-boss hands each job to one). A failed compaction fails the job, so pg-boss
 * retries it and, past the retry limit, moves it to the dead-letter queue; the compaction itself loses nothing (it
 * rolled back). The job's output records the outcome, with the operation id of the journal row it committed.
 */
import type { PgBoss } from 'pg-boss';
import type { CompactionResult } from '../compaction/compaction-result.js';
import { outcomeOf, type JobOutcome } from './compaction-queue.js';
import { JOB_DEFAULTS } from './job-defaults.js';
import { queueNames, type CompactionJobData } from './pg-boss-queue.js';

export interface WorkerOptions {
  namespace: string;
  /** Jobs run at once by this worker. Default `JOB_DEFAULTS.workerConcurrency`. */
  concurrency?: number;
  /** Told what each attempt did. */
  onOutcome?: (outcome: JobOutcome) => void;
  /**
   * The queue's heartbeat (`MEMFOLD_JOB_HEARTBEAT_SECONDS`): the worker beats four times within it, so a busy event
   * loop that delays a beat or two does not lose the job to another worker (pg-boss beats twice by default).
   */
  heartbeatSeconds?: number;
}

export interface CompactionWorker {
  stop(): Promise<void>;
}

export class CompactionJobFailed extends Error {
  constructor(readonly outcome: JobOutcome) {
    super(`compaction of ${outcome.conversationId} failed (${outcome.failureCode}): ${outcome.error}`);
  }
}

export async function startCompactionWorker(
  boss: PgBoss,
  compact: (job: CompactionJobData, signal: AbortSignal) => Promise<CompactionResult>,
  options: WorkerOptions,
): Promise<CompactionWorker> {
  const names = queueNames(options.namespace);
  const id = await boss.work<CompactionJobData, JobOutcome>(
    names.jobs,
    {
      localConcurrency: options.concurrency ?? JOB_DEFAULTS.workerConcurrency,
      batchSize: 1,
      pollingIntervalSeconds: 0.5,
      ...(options.heartbeatSeconds ? { heartbeatRefreshSeconds: Math.max(1, options.heartbeatSeconds / 4) } : {}),
    },
    async ([job]) => {
      const result = await compact(job!.data, job!.signal);
      const outcome = outcomeOf(result, job!.data.conversationId, job!.id, job!.retryCount);
      options.onOutcome?.(outcome);
      if (result.status === 'failed') throw new CompactionJobFailed(outcome);
      return outcome;
    },
  );
  return { stop: () => boss.offWork(names.jobs, { id, wait: true }) };
}
