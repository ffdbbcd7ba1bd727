/** Racing appends: seqs stay contiguous per call, and default times follow seq order. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

for (const backend of storeBackends()) {
  describe(`${backend.name}: racing appends`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    // Every reading of the clock is a millisecond later than the one before.
    let tick = Date.UTC(2025, 0, 1);
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open({ clock: () => new Date(tick++) }));
    });
    afterAll(() => cleanup());

    it('stamps default times in seq order, however the appends interleave', async () => {
      const calls = Array.from({ length: 40 }, (_, i) =>
        store.append('race', [
          { role: 'user', content: `question ${i}` },
          { role: 'assistant', content: `answer ${i}` },
        ]),
      );
      const stored = await Promise.all(calls);
      for (const pair of stored) expect(pair[1]!.seq).toBe(pair[0]!.seq + 1);
      const history = await store.loadHistory('race');
      expect(history).toHaveLength(80);
      for (let i = 1; i < history.length; i++) {
        expect(history[i]!.createdAt >= history[i - 1]!.createdAt, `seq ${history[i]!.seq} is stamped before seq ${history[i - 1]!.seq}`).toBe(true);
      }
    });
  });
}
