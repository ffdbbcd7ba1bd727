/**
 * compactHistory on a history the store does not hold: the live rows are planned instead, and when they give nothing
 * to compact the skip hands back the history given, as a skip always does, and writes nothing.
 */
import { describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createMemfold } from '../../src/memfold.js';
import { dialogue } from '../support/messages.js';

/** `turns` user/assistant pairs as a caller holding its own history would have them: never appended to memfold. */
function heldHistory(conversationId: string, turns: number): ConversationMessage[] {
  return dialogue(turns).map((m, i) => ({
    id: `held-${i}`,
    conversationId,
    seq: i + 1,
    role: m.role,
    content: m.content,
    createdAt: String(m.createdAt),
    kind: 'message' as const,
  }));
}

describe('compactHistory on a history not in the store', () => {
  for (const force of [false, true]) {
    it(`skips with the history given${force ? ', forced' : ', over the trigger'}, writing nothing`, async () => {
      const memfold = await createMemfold({
        store: 'memory',
        env: {},
        compaction: { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 },
      });
      try {
        const history = heldHistory('held', 30);
        const result = await memfold.compactor.compactHistory(history, 'held', { force });
        // The reason is the live rows': none, so below the trigger, or nothing to compact when forced.
        const skipReason = force ? 'nothing_to_compact' : 'below_trigger';
        expect(result).toMatchObject({ status: 'skipped', skipReason, messagesBefore: 60, messagesAfter: 60 });
        expect(result.history).toEqual(history);
        expect(result.tokensBefore).toBeGreaterThan(memfold.compactor.settings.trigger);
        expect(result.tokensAfter).toBe(result.tokensBefore);
        expect(await memfold.history('held')).toEqual([]);
        expect(await memfold.archive.list({ conversationId: 'held' })).toEqual([]);
      } finally {
        await memfold.close();
      }
    });
  }
});
