/**
 * A conversation's stored settings overrides on every backend: `setConversationSettings` replaces them,
 * `getConversationSettings` reads them back, `clearConversationSettings` removes them; per namespace and conversation,
 * with or without messages; settings that are not a JSON object refused naming the field, writing nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, MemfoldError } from '../../src/errors.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

for (const backend of storeBackends()) {
  describe(`${backend.name}: conversation settings`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    let now = Date.parse('2024-05-01T10:00:00.000Z');
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open({ clock: () => new Date(now) }));
    });
    afterAll(() => cleanup());

    it('has none until set, needs no message, reads back what was set; a later write replaces it whole', async () => {
      const id = `conv-${randomUUID()}`;
      expect(await store.getConversationSettings(id)).toBeUndefined();
      const settings = { contextWindow: 4_096, sessionScope: 'fixedCount', excludeTools: ['bash'], fileToolPatterns: { read: ['cat'], modified: [] } };
      const set = await store.setConversationSettings(id, settings);
      expect(set).toStrictEqual({ settings, updatedAt: new Date(now).toISOString() });
      expect(await store.getConversationSettings(id)).toStrictEqual(set);
      now += 60_000;
      const later = await store.setConversationSettings(id, { trigger: 3_000 });
      expect(later).toStrictEqual({ settings: { trigger: 3_000 }, updatedAt: new Date(now).toISOString() });
      expect(await store.getConversationSettings(id)).toStrictEqual(later);
    });

    it('clears them, saying whether there were any', async () => {
      const id = `conv-${randomUUID()}`;
      expect(await store.clearConversationSettings(id)).toBe(false);
      await store.setConversationSettings(id, { contextWindow: 8_192 });
      expect(await store.clearConversationSettings(id)).toBe(true);
      expect(await store.getConversationSettings(id)).toBeUndefined();
    });

    it("is per conversation and per namespace, and survives the conversation's compaction and erase", async () => {
      const a = `conv-${randomUUID()}`;
      const b = `conv-${randomUUID()}`;
      await store.append(a, [{ id: 'm1', role: 'user', content: 'hello' }]);
      await store.setConversationSettings(a, { contextWindow: 4_096 });
      await store.setConversationSettings(b, { contextWindow: 8_192 });
      await store.commitCompaction({ conversationId: a, operationId: randomUUID(), deleteIds: ['m1'], clipArchive: '[Context Summary]', labels: [] });
      await store.eraseConversation(a);
      expect((await store.getConversationSettings(a))?.settings).toStrictEqual({ contextWindow: 4_096 });
      expect((await store.getConversationSettings(b))?.settings).toStrictEqual({ contextWindow: 8_192 });
      const other = await backend.open({ namespace: `other-${randomUUID()}` });
      try {
        expect(await other.persistence.getConversationSettings(a)).toBeUndefined();
      } finally {
        await other.cleanup();
      }
    });

    it.each([
      ['an array', [1, 2], 'settings'],
      ['null', null, 'settings'],
      ['a string', '{"contextWindow":4096}', 'settings'],
      ['an undefined value', { contextWindow: undefined }, 'settings'],
      ['a value that is not finite', { contextWindow: Number.POSITIVE_INFINITY }, 'settings.contextWindow'],
      ['more than 64 KiB', { excludeTools: Array.from({ length: 10_000 }, (_, i) => `tool-${i}`) }, 'settings'],
    ])('refuses %s naming %s and writes nothing', async (_case, settings, field) => {
      const id = `conv-${randomUUID()}`;
      await store.setConversationSettings(id, { contextWindow: 4_096 });
      const attempt = store.setConversationSettings(id, settings as never);
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ field });
      expect((await store.getConversationSettings(id))?.settings).toStrictEqual({ contextWindow: 4_096 });
    });

    it('refuses an empty conversation id in every method', async () => {
      await expect(store.getConversationSettings('')).rejects.toMatchObject({ field: 'conversationId' });
      await expect(store.setConversationSettings('', {})).rejects.toMatchObject({ field: 'conversationId' });
      await expect(store.clearConversationSettings('')).rejects.toMatchObject({ field: 'conversationId' });
    });

    it('treats hostile conversation ids as data', async () => {
      const hostile = `x' or '1'='1 -- %_\\ ${randomUUID()}`;
      const plain = `conv-${randomUUID()}`;
      await store.setConversationSettings(plain, { contextWindow: 4_096 });
      await store.setConversationSettings(hostile, { contextWindow: 8_192 });
      expect((await store.getConversationSettings(hostile))?.settings).toStrictEqual({ contextWindow: 8_192 });
      expect((await store.getConversationSettings(plain))?.settings).toStrictEqual({ contextWindow: 4_096 });
    });

    it('refuses calls after close', async () => {
      const { persistence, cleanup: close } = await backend.open();
      await close();
      for (const call of [() => persistence.getConversationSettings('c'), () => persistence.setConversationSettings('c', {})]) {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(MemfoldError.isInstance(error) && error.code).toBe('persistence_error');
      }
    });
  });
}
