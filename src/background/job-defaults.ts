/**
 * Every default of the background jobs, in one place: retries, timers, concurrency and the queue's schema. The
 * runtime config (`MEMFOLD_JOB_*`), the queues, the worker and the CLI read them here; no other file writes one.
 */
export const JOB_DEFAULTS = Object.freeze({
  /** Retries of a failed job after the first attempt, then the dead-letter queue (`MEMFOLD_JOB_RETRIES`). */
  retries: 2,
  /** The first retry delay, doubled each time. */
  retryDelaySeconds: 1,
  /** A running job whose worker sent no heartbeat for this long is retried elsewhere (`MEMFOLD_JOB_HEARTBEAT_SECONDS`; pg-boss: at least 10). */
  heartbeatSeconds: 30,
  /** How often pg-boss looks for dead workers and due retries (`MEMFOLD_JOB_SUPERVISE_SECONDS`). */
  superviseSeconds: 10,
  /** Jobs one `memfold worker` runs at once (`--concurrency`). */
  workerConcurrency: 2,
  /** Compactions the in-process queue (PGlite, memory) runs at once, over all conversations. */
  inProcessConcurrency: 1,
  /** PostgreSQL connections pg-boss may hold when the caller does not size them (a worker: its concurrency plus 2). */
  poolSize: 4,
  /** How long a stopping worker lets its running jobs finish, in ms. */
  workerStopMs: 30_000,
  /** pg-boss's schema, apart from memfold's own tables (`config.databaseSchema` may not take it). */
  schema: 'memfold_jobs',
});
