/**
 * The compactor with each conversation's stored settings read before it plans: `compactStored`, `compactHistory`,
 * `compress`, `usage`, `observeUsage`, `resummarizeDepth` and `frontier` first bring the conversation's stored
 * overrides into the live settings (`stored-settings.ts`), so every process on the store plans with them. Everything
 * else is the compactor's own. A compaction whose stored settings cannot be read or do not hold fails as data
 * (`invalid_input` for settings that do not hold, `unexpected` for a store that fails), as compactions do.
 */
import { conversationIdProblem } from '../conversation/conversation-id.js';
import type { ConversationMessage } from '../conversation/types.js';
import { InvalidConfigError, errorMessage } from '../errors.js';
import { initialResult, type CompactionResult } from './compaction-result.js';
import type { Compactor } from './compactor-api.js';
import type { StoredSettings } from './stored-settings.js';

/** Refresh, unless the id is bad: the compactor refuses that itself, in its own terms. */
async function refreshed(stored: StoredSettings, conversationId: string): Promise<void> {
  if (conversationIdProblem(conversationId) === undefined) await stored.refresh(conversationId);
}

/** A compaction that could not start: its stored settings did not load. */
function notStarted(history: readonly ConversationMessage[], error: unknown): CompactionResult {
  const given = Array.isArray(history) ? history : [];
  return Object.assign(initialResult(given, 0), {
    status: 'failed' as const,
    failureCode: InvalidConfigError.isInstance(error) ? ('invalid_input' as const) : ('unexpected' as const),
    error: errorMessage(error),
  });
}

export function withStoredSettings(compactor: Compactor, stored: StoredSettings): Compactor {
  const compacting =
    (run: (history: readonly ConversationMessage[], conversationId: string, options?: object) => Promise<CompactionResult>) =>
    async (history: readonly ConversationMessage[], conversationId: string, options?: object): Promise<CompactionResult> => {
      try {
        await refreshed(stored, conversationId);
      } catch (error) {
        return notStarted(history, error);
      }
      return run(history, conversationId, options);
    };
  const overrides: Partial<Compactor> = {
    async compactStored(conversationId, options) {
      try {
        await refreshed(stored, conversationId);
      } catch (error) {
        return notStarted([], error);
      }
      return compactor.compactStored(conversationId, options);
    },
    compactHistory: compacting((history, id, options) => compactor.compactHistory(history, id, options)),
    compress: compacting((history, id, options) => compactor.compress(history, id, options)),
    async usage(conversationId) {
      await refreshed(stored, conversationId);
      return compactor.usage(conversationId);
    },
    async observeUsage(conversationId, usage) {
      await refreshed(stored, conversationId);
      return compactor.observeUsage(conversationId, usage);
    },
    async resummarizeDepth(conversationId, depth) {
      await refreshed(stored, conversationId);
      return compactor.resummarizeDepth(conversationId, depth);
    },
    async frontier(conversationId) {
      await refreshed(stored, conversationId);
      return compactor.frontier(conversationId);
    },
  };
  // The compactor's other members (its settings, configure, drain...) as they are, getters included.
  return Object.assign(Object.create(compactor) as Compactor, overrides);
}
