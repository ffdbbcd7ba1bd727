/**
 * Background compaction inside memfold: when an append queues a job, when `context` must compact at once, and what
 * `compact(id, { background: true })` does. The conversation's `background` setting turns the automatic parts on.
 */
import type { CompactionResult } from '../compaction/compaction-result.js';
import type { CompactionSettings } from '../compaction/compaction-settings.js';
import type { ContextUsage } from '../compaction/usage/context-usage.js';
import { errorMessage } from '../errors.js';
import { atHardWindow, createBackgroundCompaction, type BackgroundCompactionOptions } from './background-compaction.js';
import type { BackgroundEvent } from './background-events.js';
import type { EnqueueResult } from './compaction-queue.js';

export interface MemfoldBackgroundDeps extends Omit<BackgroundCompactionOptions, 'emit'> {
  settingsOf(conversationId: string): CompactionSettings;
  usage(conversationId: string): Promise<Pick<ContextUsage, 'tokens' | 'contextWindow'>>;
  /** A compaction with the offline summarizer, run in the caller's turn when the context reached the window. */
  compactNow(conversationId: string): Promise<CompactionResult>;
  emit(event: BackgroundEvent): void;
  /**
   * Drop this process's running token count of the conversation, so the next append counts from the store: a job
   * queued is compacted by another process (a worker), whose commit this process's count would never see.
   */
  forgetCount(conversationId: string): void;
}

export interface MemfoldBackground {
  enqueue(conversationId: string): Promise<EnqueueResult>;
  /** After an append: with `background` on and the running count (`tokens`) at or past the trigger, queue a job. Never throws. */
  appended(conversationId: string, tokens: number | undefined): Promise<void>;
  /** Before `context` answers: with `background` on and the context at the window, compact now. Never throws. */
  beforeContext(conversationId: string): Promise<void>;
  close(waitMs: number): Promise<void>;
}

export function memfoldBackground(deps: MemfoldBackgroundDeps): MemfoldBackground {
  const jobs = createBackgroundCompaction({ ...deps, emit: deps.emit });
  const failed = (conversationId: string, error: unknown) => deps.emit({ type: 'background_failed', conversationId, error: errorMessage(error) });
  return {
    enqueue: (conversationId) => jobs.enqueue(conversationId, deps.settingsOf(conversationId)),
    async appended(conversationId, tokens) {
      const settings = deps.settingsOf(conversationId);
      if (!settings.background || tokens === undefined || tokens < settings.trigger) return;
      // The append has landed; a queue that cannot be reached must not undo it. The next append asks again.
      await jobs.enqueue(conversationId, settings).catch((error: unknown) => failed(conversationId, error));
      deps.forgetCount(conversationId);
    },
    async beforeContext(conversationId) {
      if (!deps.settingsOf(conversationId).background) return;
      try {
        const { tokens, contextWindow } = await deps.usage(conversationId);
        if (!atHardWindow(tokens, contextWindow)) return;
        const result = await deps.compactNow(conversationId);
        deps.emit({ type: 'hard_window_fallback', conversationId, tokens, contextWindow, status: result.status, tokensAfter: result.tokensAfter });
      } catch (error) {
        failed(conversationId, error);
      }
    },
    close: (waitMs) => jobs.close(waitMs),
  };
}
