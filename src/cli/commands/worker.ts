/**
 * `memfold worker [--concurrency N]`: run queued background compactions of one namespace (PostgreSQL only: jobs
 * live in pg-boss there). Any number of workers, on any machines, share the queue; each job runs in one. Prints a
 * line a job attempt; SIGINT or SIGTERM stops taking jobs, lets the running ones finish, and closes the stores.
 */
import { startCompactionWorker } from '../../background/compaction-worker.js';
import type { JobOutcome } from '../../background/compaction-queue.js';
import { JOB_DEFAULTS } from '../../background/job-defaults.js';
import { openJobBoss, type CompactionJobData } from '../../background/pg-boss-queue.js';
import { MemfoldError, errorMessage } from '../../errors.js';
import type { Memfold } from '../../memfold.js';
import type { Output } from '../output.js';

export interface WorkerCommandOptions {
  concurrency: number;
  /** Resolves when the worker should stop (the bin: SIGINT or SIGTERM). */
  until: Promise<void>;
}

export function describeOutcome(outcome: JobOutcome): string {
  const what =
    outcome.status === 'compacted'
      ? `${outcome.tokensBefore} -> ${outcome.tokensAfter} tokens`
      : (outcome.skipReason ?? `${outcome.failureCode}: ${outcome.error}`);
  const fallbacks = outcome.fallbacks > 0 ? `, ${outcome.fallbacks} summaries offline` : '';
  return `${outcome.status} ${outcome.conversationId} (job ${outcome.jobId}, attempt ${outcome.attempt + 1}): ${what}${fallbacks}`;
}

export async function runWorker(memfold: Memfold, options: WorkerCommandOptions, output: Output): Promise<number> {
  const { config } = memfold;
  if (config.databaseUrl === undefined) {
    throw new MemfoldError(
      'invalid_config',
      'memfold worker needs PostgreSQL (MEMFOLD_DATABASE_URL): jobs wait there. On the embedded default, background compaction runs in the process that appends',
    );
  }
  const boss = await openJobBoss(
    {
      connectionString: config.databaseUrl,
      namespace: config.namespace,
      retryLimit: config.jobRetries,
      heartbeatSeconds: config.jobHeartbeatSeconds,
      superviseIntervalSeconds: config.jobSuperviseSeconds,
      poolSize: options.concurrency + 2,
    },
    (error) => output.err(`memfold worker: job queue: ${errorMessage(error)}`),
  );
  try {
    const compact = (job: CompactionJobData, signal: AbortSignal) => {
      // Compact with the settings of the process that queued the job (its window, target...: its base settings with the
      // conversation's stored ones as it read them), in this process only: the job's settings are not stored.
      if (job.settings) memfold.configure(job.settings, { conversationId: job.conversationId, persist: false });
      return memfold.compact(job.conversationId, { wait: true, signal });
    };
    const worker = await startCompactionWorker(boss, compact, {
      namespace: config.namespace,
      concurrency: options.concurrency,
      heartbeatSeconds: config.jobHeartbeatSeconds,
      onOutcome: (outcome) => output.out(describeOutcome(outcome)),
    });
    output.err(`memfold worker: taking compaction jobs of namespace ${config.namespace} (${options.concurrency} at a time)`);
    await options.until;
    await worker.stop();
  } finally {
    await boss.stop({ graceful: true, timeout: JOB_DEFAULTS.workerStopMs });
  }
  return 0;
}
