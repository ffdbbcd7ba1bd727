/**
 * A worker: takes compaction jobs of one namespace from pg-boss and runs them with an open memfold, any number of
 * processes or machines at once (pg-boss hands each job to one). A failed compaction fails the job, so pg-boss
 * retries it and, past the retry limit, moves it to the dead-letter queue; a failure a model or embedding client
 * already retried goes to the dead-letter queue at once (`jobRetryable`). The compaction itself loses nothing (it
 * rolled back). The job's output records the outcome, with the operation id of the journal row it committed.
 */
import type { Job, JobResult, PgBoss } from 'pg-boss';
import type { CompactionResult } from '../compaction/compaction-result.js';
import { MemfoldError } from '../errors.js';
import { jobRetryable, outcomeOf, type JobOutcome } from './compaction-queue.js';
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

/** A job's compaction failed: `outcome` says where; `retryable` whether the job is retried (`jobRetryable`). */
export class CompactionJobFailed extends MemfoldError {
  static override readonly kind: string = 'memfold.CompactionJobFailed';
  constructor(readonly outcome: JobOutcome) {
    super('compaction_failed', `compaction of ${outcome.conversationId} failed (${outcome.failureCode}): ${outcome.error}`, {
      retryable: jobRetryable(outcome),
      details: { outcome },
    });
    this.name = 'CompactionJobFailed';
  }
}

/** How pg-boss settles a job: done, failed (retried up to the queue's limit) or straight to the dead-letter queue. */
function settle(job: Job<CompactionJobData>, outcome: JobOutcome): JobResult<JobOutcome | { message: string; outcome: JobOutcome }> {
  if (outcome.status !== 'failed') return { id: job.id, status: 'completed', output: outcome };
  const failure = new CompactionJobFailed(outcome);
  return { id: job.id, status: failure.retryable ? 'failed' : 'deadletter', output: { message: failure.message, outcome } };
}

export async function startCompactionWorker(
  boss: PgBoss,
  compact: (job: CompactionJobData, signal: AbortSignal) => Promise<CompactionResult>,
  options: WorkerOptions,
): Promise<CompactionWorker> {
  const names = queueNames(options.namespace);
  const id = await boss.work(
    names.jobs,
    {
      localConcurrency: options.concurrency ?? JOB_DEFAULTS.workerConcurrency,
      batchSize: 1,
      pollingIntervalSeconds: 0.5,
      // Each job is settled as its outcome says (`settle`), not by whether the handler throws.
      perJobResults: true,
      ...(options.heartbeatSeconds ? { heartbeatRefreshSeconds: Math.max(1, options.heartbeatSeconds / 4) } : {}),
    },
    async (jobs: Job<CompactionJobData>[]) =>
      Promise.all(
        jobs.map(async (job) => {
          const result = await compact(job.data, job.signal);
          const outcome = outcomeOf(result, job.data.conversationId, job.id, job.retryCount);
          options.onOutcome?.(outcome);
          return settle(job, outcome);
        }),
      ),
  );
  return { stop: () => boss.offWork(names.jobs, { id, wait: true }) };
}
