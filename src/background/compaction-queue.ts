/**
 * Background compaction: a compaction asked for now and run later, outside the caller's turn. Two engines behind
 * one interface: jobs in PostgreSQL through pg-boss (`pg-boss-queue.ts`, run by `memfold worker` processes), and,
 * on the embedded default where only one process may open the store, a queue in the process (`in-process-queue.ts`).
 * Either way a conversation has at most one job waiting: a burst of appends asks once.
 */
import { JOB_DEFAULTS } from './job-defaults.js';
import { committedOperationId, type CompactionResult } from '../compaction/compaction-result.js';
import type { CompactionSettings } from '../compaction/compaction-settings.js';

export interface EnqueueResult {
  conversationId: string;
  /** False when a job for the conversation was already waiting: that one will do. */
  queued: boolean;
  /** The job's id (pg-boss's, or `local-N` in the process); absent when not queued. */
  jobId?: string;
  engine: 'pg-boss' | 'in-process';
}

/** What a job did, as the queue records it (pg-boss keeps it as the job's output, beside the operation journal). */
export interface JobOutcome {
  conversationId: string;
  jobId: string;
  status: CompactionResult['status'];
  skipReason?: CompactionResult['skipReason'];
  failureCode?: CompactionResult['failureCode'];
  error?: string;
  /** The operation the compaction committed (its journal row), when it committed one. */
  operationId?: string;
  tokensBefore: number;
  tokensAfter: number;
  /** 0 for the first attempt. */
  attempt: number;
  /** Summaries the offline summarizer wrote because the model failed (0 when the model wrote them all). */
  fallbacks: number;
  /** Summarizer calls the compaction made (`CompactionResult.modelCalls`): what a job costs against a rate limit. */
  modelCalls: number;
  /** Attempts of the model or embedding call that failed the compaction, when its client's retry loop gave up. */
  clientAttempts?: number;
}

export interface CompactionQueue {
  readonly engine: EnqueueResult['engine'];
  /**
   * `settings`: the conversation's settings in the enqueuing process, which a worker compacts with (settings are
   * per process, and a worker elsewhere would otherwise use its own).
   */
  enqueue(conversationId: string, settings?: CompactionSettings): Promise<EnqueueResult>;
  /** Wait for the jobs this process runs (in-process) or stop sending (pg-boss), at most `waitMs`. */
  close(waitMs: number): Promise<void>;
}

/**
 * Whether a failed compaction's job is retried. Not when the failure came out of a model or embedding client's own
 * retry loop (`clientAttempts`): that loop already retried what was worth retrying, within its deadline, and a job
 * retry on top would multiply the calls (one retry loop per call path; see README.md).
 */
export function jobRetryable(outcome: JobOutcome): boolean {
  return outcome.status === 'failed' && outcome.clientAttempts === undefined;
}

export function outcomeOf(result: CompactionResult, conversationId: string, jobId: string, attempt: number): JobOutcome {
  const committed = committedOperationId(result);
  return {
    conversationId,
    jobId,
    status: result.status,
    ...(result.skipReason ? { skipReason: result.skipReason } : {}),
    ...(result.failureCode ? { failureCode: result.failureCode } : {}),
    ...(result.error ? { error: result.error } : {}),
    ...(committed ? { operationId: committed } : {}),
    ...(result.clientAttempts !== undefined ? { clientAttempts: result.clientAttempts } : {}),
    tokensBefore: result.tokensBefore,
    tokensAfter: result.tokensAfter,
    attempt,
    fallbacks: result.fallbacks.length,
    modelCalls: result.modelCalls,
  };
}

/** pg-boss's schema, apart from memfold's own tables (`config.databaseSchema` may not take it). */
export const DEFAULT_JOB_SCHEMA = JOB_DEFAULTS.schema;
