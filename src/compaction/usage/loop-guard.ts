/**
 * The loop guard: compactions that leave the context at or over the trigger (or fail) are counted per
 * conversation; at LOOP_GUARD_LIMIT in a row automatic compaction pauses. The count and the pause live in the
 * live store (`PersistenceProvider.getLoopGuardState` and its pair), so every process sharing the store, and the
 * next one to open it, sees them. A streak counts against one trigger: a compactor with another trigger starts
 * from nothing.
 */
import type { PersistenceProvider } from '../../persistence/persistence-provider.js';
import type { CompactionEvent, CompactionResult } from '../compaction-result.js';
import type { CompactionSettings } from '../compaction-settings.js';

/** Compactions in a row that leave the context at or over the trigger before automatic compaction pauses. */
export const LOOP_GUARD_LIMIT = 2;

export type LoopGuardStore = Pick<PersistenceProvider, 'getLoopGuardState' | 'setLoopGuardState' | 'clearLoopGuardState'>;

export interface LoopGuard {
  /** Whether the stored record pauses automatic compaction at this trigger (one read). */
  isPaused(conversationId: string): Promise<boolean>;
  /** Forget the streak and the pause (`resume()`): one delete. */
  clear(conversationId: string): Promise<void>;
  /**
   * The history was found under the trigger, which lifts a pause. The record is deleted only when this process
   * counted or read a streak for the conversation, so a turn under the trigger costs no write.
   */
  underTrigger(conversationId: string): Promise<void>;
  /**
   * Count one finished compaction (the caller holds the conversation's lock, so the read and the write are one
   * step): one that gets under the trigger deletes the record; any other adds one to the streak, pausing at the
   * limit and emitting `auto_compaction_paused` when it reaches it.
   */
  track(conversationId: string, result: CompactionResult): Promise<void>;
}

/** `settingsOf` gives a conversation's trigger as it is now: settings may change at run time (`live-settings.ts`). */
export function createLoopGuard(
  settingsOf: (conversationId: string) => Pick<CompactionSettings, 'trigger'>,
  store: LoopGuardStore,
  emit: (event: CompactionEvent) => void,
): LoopGuard {
  /** Conversations this process counted or read a streak for: the only ones `underTrigger` writes for. */
  const streaks = new Set<string>();

  async function clear(conversationId: string): Promise<void> {
    await store.clearLoopGuardState(conversationId);
    streaks.delete(conversationId);
  }

  return {
    async isPaused(conversationId) {
      const state = await store.getLoopGuardState(conversationId);
      if (state === undefined || state.trigger !== settingsOf(conversationId).trigger) return false;
      streaks.add(conversationId);
      return state.pausedAt !== undefined;
    },

    clear,

    async underTrigger(conversationId) {
      if (streaks.has(conversationId)) await clear(conversationId);
    },

    async track(conversationId, result) {
      const { trigger } = settingsOf(conversationId);
      if (result.status === 'compacted' && result.tokensAfter < trigger) {
        await clear(conversationId);
        return;
      }
      const stored = await store.getLoopGuardState(conversationId);
      const streak = (stored?.trigger === trigger ? stored.streak : 0) + 1;
      await store.setLoopGuardState(conversationId, { streak, trigger, paused: streak >= LOOP_GUARD_LIMIT });
      streaks.add(conversationId);
      if (streak === LOOP_GUARD_LIMIT) {
        const why = result.status === 'failed' ? `failed (${result.failureCode})` : `left ${result.tokensAfter} tokens`;
        emit({
          type: 'auto_compaction_paused',
          conversationId,
          tokens: result.tokensAfter,
          trigger,
          reason: `${LOOP_GUARD_LIMIT} compactions in a row did not bring the context under the trigger (${trigger} tokens; the last ${why}); automatic compaction is paused for this conversation, forced compaction still runs`,
        });
      }
    },
  };
}
