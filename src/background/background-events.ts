/** What background compaction reports through `onEvent`. */
import type { EnqueueResult, JobOutcome } from './compaction-queue.js';

export type BackgroundEvent =
  /** A job was queued (`queued: false`: one was already waiting for the conversation). */
  | ({ type: 'compaction_queued' } & EnqueueResult)
  /** An in-process job ended, after its last attempt (pg-boss jobs end in a worker: see `memfold worker`). */
  | ({ type: 'compaction_job_ended' } & JobOutcome)
  /**
   * The context reached the hard window before a background job brought it down: a synchronous compaction with the
   * offline summarizer ran in the caller's turn (`status` what it did), so the request stays under the window.
   */
  | { type: 'hard_window_fallback'; conversationId: string; tokens: number; contextWindow: number; status: string; tokensAfter: number }
  | { type: 'background_failed'; conversationId: string; error: string };
