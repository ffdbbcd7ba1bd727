/**
 * The loop guard: compactions that leave the context at or over the trigger (or fail) are counted per
 * conversation; at LOOP_GUARD_LIMIT in a row automatic compaction pauses. The count lives in the process.
 */
import type { CompactionEvent, CompactionResult } from './compaction-result.js';
import type { CompactionSettings } from './compaction-settings.js';

/** Compactions in a row that leave the context at or over the trigger before automatic compaction pauses. */
export const LOOP_GUARD_LIMIT = 2;

export interface LoopGuard {
  isPaused(conversationId: string): boolean;
  /** Forget the streak: `resume()`, a history under the trigger, or a compaction that gets under it. */
  clear(conversationId: string): void;
  /** Count one finished compaction; emits `auto_compaction_paused` when the streak reaches the limit. */
  track(conversationId: string, result: CompactionResult): void;
}

export function createLoopGuard(settings: Pick<CompactionSettings, 'trigger'>, emit: (event: CompactionEvent) => void): LoopGuard {
  const ineffective = new Map<string, number>();
  return {
    isPaused: (conversationId) => (ineffective.get(conversationId) ?? 0) >= LOOP_GUARD_LIMIT,
    clear: (conversationId) => void ineffective.delete(conversationId),
    track(conversationId, result) {
      if (result.status === 'compacted' && result.tokensAfter < settings.trigger) {
        ineffective.delete(conversationId);
        return;
      }
      const streak = (ineffective.get(conversationId) ?? 0) + 1;
      ineffective.set(conversationId, streak);
      if (streak === LOOP_GUARD_LIMIT) {
        const why = result.status === 'failed' ? `failed (${result.failureCode})` : `left ${result.tokensAfter} tokens`;
        emit({
          type: 'auto_compaction_paused',
          conversationId,
          tokens: result.tokensAfter,
          trigger: settings.trigger,
          reason: `${LOOP_GUARD_LIMIT} compactions in a row did not bring the context under the trigger (${settings.trigger} tokens; the last ${why}); automatic compaction is paused for this conversation, forced compaction still runs`,
        });
      }
    },
  };
}
