/**
 * The memory_read answer's token budget as a memfold setting: `memoryReadTokens` bounds a search answer,
 * counted with memfold's own token counter, and a bad value is refused before anything opens.
 */
import { describe, expect, it } from 'vitest';
import { createMemfold } from '../../src/memfold.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';

const turns = Array.from({ length: 160 }, (_, i) => ({
  role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
  content: `Turn ${i}: the lighthouse keeper logged ${i} gulls near the harbour and noted the tide tables again.`,
  createdAt: new Date(Date.UTC(2024, 2, 1, 9, i)).toISOString(),
}));

describe('memory_read budget (memoryReadTokens)', () => {
  it("bounds a search answer by memfold's token counter; the default budget shows more", async () => {
    const answers: Record<string, string> = {};
    for (const [name, budget] of [
      ['small', 200],
      ['default', undefined],
    ] as const) {
      const tokens = createTokenCounter({ mode: 'chars4' });
      const memfold = await createMemfold({
        env: {},
        store: 'memory',
        tokens,
        compaction: { contextWindow: 2_000 },
        ...(budget !== undefined ? { memoryReadTokens: budget } : {}),
      });
      try {
        await memfold.append('c', turns);
        expect((await memfold.compact('c')).status).toBe('compacted');
        const { ok, output } = await memfold.memoryRead('c').execute({ query: 'lighthouse gulls harbour tide' });
        expect(ok).toBe(true);
        answers[name] = output;
        if (budget !== undefined) expect(tokens.count(output)).toBeLessThanOrEqual(budget);
      } finally {
        await memfold.close();
      }
    }
    expect(answers.small!.length).toBeLessThan(answers.default!.length);
  });

  it('refuses a budget outside 200 to 12,000 tokens, naming the setting', async () => {
    for (const bad of [199, 12_001, 1.5]) {
      await expect(createMemfold({ env: {}, store: 'memory', memoryReadTokens: bad })).rejects.toMatchObject({
        code: 'invalid_config',
        field: 'memoryReadTokens',
      });
    }
  });
});
