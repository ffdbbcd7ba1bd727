/**
 * `context_warning`, once per crossing: the event fires when a conversation's context is seen at or above
 * `warnAt` × window and was not seen there the time before; seeing it below the mark re-arms it. It is seen when
 * compaction plans (the whole history counted), when the assistant's usage is observed, and after each append (a
 * running count per conversation, so an append counts only its own messages). Counts are calibrated by the
 * conversation's factor (`usage-calibration.ts`). The state lives in the process, for at most MAX_TRACKED conversations.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import { calibrated } from '../../tokens/usage-calibration.js';
import type { CompactionEvent } from '../compaction-result.js';
import type { CompactionSettings } from '../compaction-settings.js';

/** Conversations whose count and warning state a process keeps; the least recently seen is forgotten first. */
export const MAX_TRACKED = 10_000;

export interface ContextWarnings {
  /** A conversation's mark in tokens: floor(contextWindow × warnAt), with its settings as they are now. */
  thresholdOf(conversationId: string): number;
  /**
   * The whole history was counted (`tokens`, calibrated by `factor`, default 1; its highest seq `lastSeq`): warns on
   * a crossing and restarts the running count, whose appends are then calibrated by `factor` too.
   */
  observe(conversationId: string, tokens: number, lastSeq: number, factor?: number): void;
  /**
   * Messages were appended (as stored): adds the tokens of those past the count's last seq and warns on a crossing.
   * Without a count (the conversation's first append in this process, or the first after its live rows changed)
   * the history and its calibration factor are loaded once through `load` to start one; a failing load only skips the check.
   * Resolves to the running count (calibrated tokens), or undefined when there is none (background compaction reads it).
   */
  appended(conversationId: string, stored: readonly ConversationMessage[], load: () => Promise<LoadedContext>): Promise<number | undefined>;
  /**
   * The live rows changed other than by an append (a compaction or re-summarization committed, an interrupted one
   * finished): the running count is dropped. With `tokensAfter` under the mark the warning re-arms.
   */
  changed(conversationId: string, tokensAfter?: number): void;
}

/** What starts a running count: the live history and the conversation's calibration factor. */
export interface LoadedContext {
  history: readonly ConversationMessage[];
  factor: number;
}

interface Entry {
  /** Calibrated tokens, and the factor the appends past `lastSeq` are calibrated by. */
  count: { tokens: number; lastSeq: number; factor: number } | undefined;
  warned: boolean;
  /** The load that starts a count, shared by the appends that wait for it. */
  loading: Promise<void> | undefined;
  /** Moves on whenever the count is replaced or dropped, so a load that started before cannot overwrite it. */
  epoch: number;
}

export interface ContextWarningsOptions {
  /** A conversation's settings as they are now (they may change at run time: `live-settings.ts`). */
  settingsOf: (conversationId: string) => Pick<CompactionSettings, 'contextWindow' | 'warnAt'>;
  countMessage: (message: ConversationMessage) => number;
  emit: (event: CompactionEvent) => void;
}

export function createContextWarnings({ settingsOf, countMessage, emit }: ContextWarningsOptions): ContextWarnings {
  const thresholdOf = (conversationId: string) => {
    const { contextWindow, warnAt } = settingsOf(conversationId);
    return Math.floor(contextWindow * warnAt);
  };
  const entries = new Map<string, Entry>();

  /** The conversation's entry, moved to the newest end; the oldest is forgotten past MAX_TRACKED. */
  function entry(conversationId: string): Entry {
    const found = entries.get(conversationId);
    if (found !== undefined) entries.delete(conversationId);
    const current: Entry = found ?? { count: undefined, warned: false, loading: undefined, epoch: 0 };
    entries.set(conversationId, current);
    if (entries.size > MAX_TRACKED) entries.delete(entries.keys().next().value!);
    return current;
  }

  function check(current: Entry, conversationId: string, tokens: number): void {
    const threshold = thresholdOf(conversationId);
    if (tokens < threshold) current.warned = false;
    else if (!current.warned) {
      current.warned = true;
      emit({ type: 'context_warning', conversationId, tokens, threshold });
    }
  }

  async function startCount(current: Entry, load: () => Promise<LoadedContext>): Promise<void> {
    const epoch = current.epoch;
    try {
      const { history, factor } = await load();
      if (current.epoch !== epoch) return;
      let tokens = 0;
      let lastSeq = 0;
      for (const message of history) {
        tokens += calibrated(countMessage(message), factor);
        lastSeq = Math.max(lastSeq, message.seq);
      }
      current.count = { tokens, lastSeq, factor };
    } catch {
      // No count: the append stands, and the next one tries again.
    } finally {
      current.loading = undefined;
    }
  }

  return {
    thresholdOf,

    observe(conversationId, tokens, lastSeq, factor = 1) {
      const current = entry(conversationId);
      current.epoch++;
      current.count = { tokens, lastSeq, factor };
      check(current, conversationId, tokens);
    },

    async appended(conversationId, stored, load) {
      if (stored.length === 0) return entries.get(conversationId)?.count?.tokens;
      const current = entry(conversationId);
      if (current.count === undefined) {
        current.loading ??= startCount(current, load);
        await current.loading;
      }
      const count = current.count;
      if (count === undefined) return undefined;
      for (const message of stored) {
        if (message.seq <= count.lastSeq) continue;
        count.tokens += calibrated(countMessage(message), count.factor);
        count.lastSeq = message.seq;
      }
      check(current, conversationId, count.tokens);
      return count.tokens;
    },

    changed(conversationId, tokensAfter) {
      const current = entries.get(conversationId);
      if (current === undefined) return;
      current.epoch++;
      current.count = undefined;
      if (tokensAfter !== undefined && tokensAfter < thresholdOf(conversationId)) current.warned = false;
    },
  };
}
