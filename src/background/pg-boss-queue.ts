/**
 * Compaction jobs in PostgreSQL, through pg-boss (its own schema, `memfold_jobs` by default, beside memfold's
 * tables). One queue per namespace, policy `stately` keyed by conversation: at most one job waiting and one running
 * per conversation, so a burst of appends makes one job. A failed job is retried with exponential backoff, then
 * moved to the dead-letter queue; a job whose worker died (no heartbeat) is retried by another.
 */
import type { PgBoss } from 'pg-boss';
import type { CompactionSettings } from '../compaction/compaction-settings.js';
import { DEFAULT_JOB_SCHEMA, type CompactionQueue } from './compaction-queue.js';
import { JOB_DEFAULTS } from './job-defaults.js';

export interface JobQueueOptions {
  connectionString: string;
  /** The namespace whose conversations the queue holds. */
  namespace: string;
  /** pg-boss's schema. Default `memfold_jobs`. Every default here is `JOB_DEFAULTS`'s (`job-defaults.ts`). */
  schema?: string;
  retryLimit?: number;
  retryDelaySeconds?: number;
  /** A running job whose worker sent no heartbeat for this long is retried elsewhere. Default 30 (pg-boss: at least 10). */
  heartbeatSeconds?: number;
  /** How often pg-boss checks for dead workers and due retries. Default 10 (tests use 1). */
  superviseIntervalSeconds?: number;
  /** PostgreSQL connections pg-boss may hold. Default 4; a worker takes its concurrency plus 2 (fetching, heartbeats). */
  poolSize?: number;
}

export interface CompactionJobData {
  namespace: string;
  conversationId: string;
  /** The enqueuing process's settings for the conversation, as JSON. */
  settings?: CompactionSettings;
}

export { DEFAULT_JOB_SCHEMA };

export function queueNames(namespace: string): { jobs: string; dead: string } {
  return { jobs: `memfold-compaction.${namespace}`, dead: `memfold-compaction-dead.${namespace}` };
}

/** Start pg-boss (creating its schema on first use) with the namespace's queues. Errors are the caller's: pg-boss's `error` events are passed to `onError`. */
export async function openJobBoss(options: JobQueueOptions, onError: (error: Error) => void = () => undefined): Promise<PgBoss> {
  // Loaded here, not with memfold: pg-boss (and OpenTelemetry behind it) is for PostgreSQL's job queue only.
  const { PgBoss } = await import('pg-boss');
  const boss = new PgBoss({
    connectionString: options.connectionString,
    schema: options.schema ?? DEFAULT_JOB_SCHEMA,
    superviseIntervalSeconds: options.superviseIntervalSeconds ?? JOB_DEFAULTS.superviseSeconds,
    monitorIntervalSeconds: options.superviseIntervalSeconds ?? JOB_DEFAULTS.superviseSeconds,
    max: options.poolSize ?? JOB_DEFAULTS.poolSize,
  });
  // Without a listener an `error` event would throw: the library stays quiet and reports through onError.
  boss.on('error', onError);
  await boss.start();
  const names = queueNames(options.namespace);
  if (!(await boss.getQueue(names.dead))) await boss.createQueue(names.dead);
  const retries = {
    retryLimit: options.retryLimit ?? JOB_DEFAULTS.retries,
    retryDelay: options.retryDelaySeconds ?? JOB_DEFAULTS.retryDelaySeconds,
    retryBackoff: true,
  };
  if (await boss.getQueue(names.jobs)) {
    // The last process to open sets the retries; the heartbeat stays as the queue was made (pg-boss cannot change it).
    await boss.updateQueue(names.jobs, retries);
  } else {
    await boss.createQueue(names.jobs, {
      policy: 'stately',
      ...retries,
      heartbeatSeconds: options.heartbeatSeconds ?? JOB_DEFAULTS.heartbeatSeconds,
      deadLetter: names.dead,
    });
  }
  return boss;
}

/** The enqueue side: what `compact(id, { background: true })` and a crossing append call on PostgreSQL. */
export function createPgBossQueue(boss: PgBoss, namespace: string, stopBoss: boolean): CompactionQueue {
  const names = queueNames(namespace);
  return {
    engine: 'pg-boss',
    async enqueue(conversationId, settings) {
      const data: CompactionJobData = { namespace, conversationId, ...(settings ? { settings } : {}) };
      const jobId = await boss.send(names.jobs, data, { singletonKey: conversationId });
      return jobId === null ? { conversationId, queued: false, engine: 'pg-boss' } : { conversationId, queued: true, jobId, engine: 'pg-boss' };
    },
    async close(waitMs) {
      if (stopBoss) await boss.stop({ graceful: true, timeout: waitMs });
    },
  };
}
