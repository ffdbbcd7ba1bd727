/**
 * A conversation's token calibration on every backend: what `setTokenCalibration` writes, `getTokenCalibration`
 * reads back, per conversation; `commitCompaction` drops it in its own transaction (a commit that fails keeps it);
 * bad updates refused naming the field, writing nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, MemfoldError } from '../../src/errors.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

for (const backend of storeBackends()) {
  describe(`${backend.name}: token calibration`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    let now = Date.parse('2024-05-01T10:00:00.000Z');
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open({ clock: () => new Date(now) }));
    });
    afterAll(() => cleanup());

    async function conversation(): Promise<string> {
      const id = `conv-${randomUUID()}`;
      await store.append(id, [
        { id: 'm1', role: 'user', content: 'hello' },
        { id: 'm2', role: 'assistant', content: 'hi' },
      ]);
      return id;
    }

    it('has none until one is set; reads back what was set; a later one replaces it', async () => {
      const id = await conversation();
      expect(await store.getTokenCalibration(id)).toBeUndefined();
      const set = await store.setTokenCalibration(id, { factor: 1.2345678, promptTokens: 2_469, estimatedTokens: 2_000 });
      expect(set).toStrictEqual({ factor: 1.2345678, promptTokens: 2_469, estimatedTokens: 2_000, observedAt: new Date(now).toISOString() });
      expect(await store.getTokenCalibration(id)).toStrictEqual(set);
      now += 60_000;
      const later = await store.setTokenCalibration(id, { factor: 5, promptTokens: 20_000, estimatedTokens: 1_000 });
      expect(later).toStrictEqual({ factor: 5, promptTokens: 20_000, estimatedTokens: 1_000, observedAt: new Date(now).toISOString() });
      expect(await store.getTokenCalibration(id)).toStrictEqual(later);
    });

    it.each(['delete', 'overlay'] as const)('is dropped by a committed compaction in %s mode, and kept when the commit fails', async (mode) => {
      const id = await conversation();
      await store.setTokenCalibration(id, { factor: 2, promptTokens: 200, estimatedTokens: 100 });
      const commit = (deleteIds: string[]) =>
        store.commitCompaction({ conversationId: id, operationId: randomUUID(), deleteIds, clipArchive: '[Context Summary]', labels: [], mode });
      await expect(commit(['gone'])).rejects.toMatchObject({ code: 'persistence_error' });
      expect(await store.getTokenCalibration(id)).toMatchObject({ factor: 2 });
      await commit(['m1']);
      expect(await store.getTokenCalibration(id)).toBeUndefined();
    });

    it('is dropped with the commit inside transaction(), and kept when that transaction rolls back', async () => {
      const id = await conversation();
      await store.setTokenCalibration(id, { factor: 3, promptTokens: 300, estimatedTokens: 100 });
      const failing = store.transaction(async (tx) => {
        await tx.commitCompaction({ conversationId: id, operationId: randomUUID(), deleteIds: ['m1'], clipArchive: '[Context Summary]', labels: [] });
        throw new Error('after the commit');
      });
      await expect(failing).rejects.toThrow('after the commit');
      expect(await store.getTokenCalibration(id)).toMatchObject({ factor: 3 });
      await store.transaction((tx) =>
        tx.commitCompaction({ conversationId: id, operationId: randomUUID(), deleteIds: ['m1'], clipArchive: '[Context Summary]', labels: [] }),
      );
      expect(await store.getTokenCalibration(id)).toBeUndefined();
    });

    it("is per conversation: one conversation's write or commit leaves the others alone", async () => {
      const a = await conversation();
      const b = await conversation();
      await store.setTokenCalibration(a, { factor: 1.5, promptTokens: 150, estimatedTokens: 100 });
      await store.setTokenCalibration(b, { factor: 4, promptTokens: 400, estimatedTokens: 100 });
      await store.commitCompaction({ conversationId: b, operationId: randomUUID(), deleteIds: ['m1'], clipArchive: '[Context Summary]', labels: [] });
      expect(await store.getTokenCalibration(a)).toMatchObject({ factor: 1.5 });
      expect(await store.getTokenCalibration(b)).toBeUndefined();
    });

    it('refuses a conversation nothing was appended to, naming conversationId, and stores nothing', async () => {
      const id = `conv-${randomUUID()}`;
      const attempt = store.setTokenCalibration(id, { factor: 1, promptTokens: 1, estimatedTokens: 1 });
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ field: 'conversationId' });
      expect(await store.getTokenCalibration(id)).toBeUndefined();
    });

    it.each([
      ['a factor below 1', { factor: 0.9, promptTokens: 90, estimatedTokens: 100 }, 'update.factor'],
      ['a factor above 5', { factor: 5.01, promptTokens: 501, estimatedTokens: 100 }, 'update.factor'],
      ['a factor that is not a number', { factor: Number.NaN, promptTokens: 1, estimatedTokens: 1 }, 'update.factor'],
      ['a fractional prompt count', { factor: 1, promptTokens: 1.5, estimatedTokens: 1 }, 'update.promptTokens'],
      ['a zero prompt count', { factor: 1, promptTokens: 0, estimatedTokens: 1 }, 'update.promptTokens'],
      ['an estimate over the column', { factor: 1, promptTokens: 1, estimatedTokens: 2 ** 31 }, 'update.estimatedTokens'],
      ['a missing estimate', { factor: 1, promptTokens: 1 }, 'update.estimatedTokens'],
      ['no update at all', null, 'update'],
    ])('refuses %s naming %s and writes nothing', async (_case, update, field) => {
      const id = await conversation();
      await store.setTokenCalibration(id, { factor: 1.25, promptTokens: 125, estimatedTokens: 100 });
      const before = await store.getTokenCalibration(id);
      const attempt = store.setTokenCalibration(id, update as never);
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ field, message: expect.stringContaining(field) });
      expect(await store.getTokenCalibration(id)).toStrictEqual(before);
    });

    it('refuses an empty conversation id in both methods', async () => {
      await expect(store.getTokenCalibration('')).rejects.toMatchObject({ field: 'conversationId' });
      await expect(store.setTokenCalibration('', { factor: 1, promptTokens: 1, estimatedTokens: 1 })).rejects.toMatchObject({ field: 'conversationId' });
    });

    it('treats hostile conversation ids as data', async () => {
      const hostile = `x' or '1'='1 -- %_\\ ${randomUUID()}`;
      await store.append(hostile, [{ role: 'user', content: 'hello' }]);
      const plain = await conversation();
      await store.setTokenCalibration(plain, { factor: 1.1, promptTokens: 110, estimatedTokens: 100 });
      await store.setTokenCalibration(hostile, { factor: 2.2, promptTokens: 220, estimatedTokens: 100 });
      expect(await store.getTokenCalibration(hostile)).toMatchObject({ factor: 2.2 });
      expect(await store.getTokenCalibration(plain)).toMatchObject({ factor: 1.1 });
    });

    it('refuses calls after close', async () => {
      const { persistence, cleanup: close } = await backend.open();
      await close();
      await expect(persistence.getTokenCalibration('c')).rejects.toSatisfy((error: unknown) => MemfoldError.isInstance(error));
      await expect(persistence.setTokenCalibration('c', { factor: 1, promptTokens: 1, estimatedTokens: 1 })).rejects.toMatchObject({
        code: 'persistence_error',
      });
    });
  });
}
