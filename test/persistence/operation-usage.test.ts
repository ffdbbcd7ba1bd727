/**
 * The usage a compaction's commit records on its operation row (migration 008): stored and listed on every store,
 * absent when the commit gives none, refused naming the field when malformed (nothing written).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

for (const backend of storeBackends()) {
  describe(`${backend.name}: usage on the operation row`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    async function seed(): Promise<{ id: string; operationId: string }> {
      const id = `conv-${randomUUID()}`;
      await store.append(
        id,
        [1, 2, 3].map((n) => ({ id: `m${n}`, role: 'user' as const, content: `text ${n}` })),
      );
      const operationId = `op-${randomUUID()}`;
      await store.recordOperation({ id: operationId, conversationId: id, status: 'archived', messageIds: ['m1'], labels: [] });
      return { id, operationId };
    }

    it('keeps the usage a commit gives, and none when it gives none', async () => {
      const usage = { byModel: { 'gpt-4.1-mini': { calls: 3, inputTokens: 12_000, outputTokens: 900 } }, costUsd: 0.00624 };
      const { id, operationId } = await seed();
      await store.commitCompaction({ conversationId: id, operationId, deleteIds: ['m1'], clipArchive: 'summary', labels: ['d0-a'], usage });
      expect((await store.listOperations(id))[0]).toMatchObject({ id: operationId, status: 'committed', usage });

      const bare = await seed();
      await store.commitCompaction({ conversationId: bare.id, operationId: bare.operationId, deleteIds: ['m1'], clipArchive: 'summary', labels: [] });
      expect((await store.listOperations(bare.id))[0]!.usage).toBeUndefined();
    });

    it('refuses a malformed usage naming the field, and writes nothing', async () => {
      const { id, operationId } = await seed();
      for (const [usage, field] of [
        [{ byModel: { m: { calls: -1, inputTokens: 0, outputTokens: 0 } }, costUsd: 0 }, 'commit.usage.byModel.m.calls'],
        [{ byModel: {}, costUsd: -2 }, 'commit.usage.costUsd'],
        [{ costUsd: 0 }, 'commit.usage.byModel'],
      ] as const) {
        await expect(
          store.commitCompaction({ conversationId: id, operationId, deleteIds: ['m1'], clipArchive: 's', labels: [], usage: usage as never }),
        ).rejects.toThrow(field);
      }
      expect((await store.listOperations(id))[0]).toMatchObject({ status: 'archived' });
      expect((await store.loadHistory(id)).map((m) => m.id)).toEqual(['m1', 'm2', 'm3']);
    });
  });
}
