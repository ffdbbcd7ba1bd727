/**
 * Background compaction as memfold uses it: the engine chosen by the store (pg-boss on PostgreSQL, a queue in the
 * process on PGlite or in memory), opened on first use (pg-boss creates its schema then, not when memfold opens),
 * and the hard-window fallback that keeps a request under the window while a job is still to run.
 */
import type { CompactionResult } from '../compaction/compaction-result.js';
import type { CompactionSettings } from '../compaction/compaction-settings.js';
import { errorMessage } from '../errors.js';
import { openOnce } from '../open-once.js';
import type { BackgroundEvent } from './background-events.js';
import type { CompactionQueue, EnqueueResult } from './compaction-queue.js';
import { createInProcessQueue } from './in-process-queue.js';
import { createPgBossQueue, openJobBoss, type JobQueueOptions } from './pg-boss-queue.js';

export interface BackgroundCompactionOptions {
  /** PostgreSQL's URL when memfold's live store is PostgreSQL: jobs go to pg-boss there. Absent: in-process. */
  databaseUrl: string | undefined;
  namespace: string;
  /** Runs one queued compaction in this process (in-process engine only). */
  compact: (conversationId: string) => Promise<CompactionResult>;
  emit: (event: BackgroundEvent) => void;
  /** pg-boss settings (retries, heartbeat, intervals). */
  jobs?: Partial<Omit<JobQueueOptions, 'connectionString' | 'namespace'>>;
}

export interface BackgroundCompaction {
  enqueue(conversationId: string, settings?: CompactionSettings): Promise<EnqueueResult>;
  close(waitMs: number): Promise<void>;
}

export function createBackgroundCompaction(options: BackgroundCompactionOptions): BackgroundCompaction {
  let opened = false;
  const open = async (): Promise<CompactionQueue> => {
    if (options.databaseUrl === undefined) {
      return createInProcessQueue(options.compact, { onOutcome: (outcome) => options.emit({ type: 'compaction_job_ended', ...outcome }) });
    }
    const boss = await openJobBoss({ ...options.jobs, connectionString: options.databaseUrl, namespace: options.namespace }, (error) =>
      options.emit({ type: 'background_failed', conversationId: '', error: errorMessage(error) }),
    );
    return createPgBossQueue(boss, options.namespace, true);
  };
  const queue = openOnce(async () => {
    const opening = await open();
    opened = true;
    return opening;
  });
  return {
    async enqueue(conversationId, settings) {
      const result = await (await queue()).enqueue(conversationId, settings);
      options.emit({ type: 'compaction_queued', ...result });
      return result;
    },
    async close(waitMs) {
      // Nothing to close unless a queue opened (never open one just to close it).
      if (opened) await (await queue().catch(() => undefined))?.close(waitMs);
    },
  };
}

/** Whether a context of `tokens` has reached the hard window: a request built from it would not fit. */
export function atHardWindow(tokens: number, contextWindow: number): boolean {
  return tokens >= contextWindow;
}
