/**
 * The loop guard's record on every backend: what `setLoopGuardState` writes, `getLoopGuardState` reads back and
 * `clearLoopGuardState` removes, per conversation; bad updates refused naming the field, writing nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, MemfoldError } from '../../src/errors.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

for (const backend of storeBackends()) {
  describe(`${backend.name}: loop guard state`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    let now = Date.parse('2024-05-01T10:00:00.000Z');
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open({ clock: () => new Date(now) }));
    });
    afterAll(() => cleanup());

    async function conversation(): Promise<string> {
      const id = `conv-${randomUUID()}`;
      await store.append(id, [{ role: 'user', content: 'hello' }]);
      return id;
    }

    it('has no record until one is set; reads back what was set; clear removes it', async () => {
      const id = await conversation();
      expect(await store.getLoopGuardState(id)).toBeUndefined();
      const set = await store.setLoopGuardState(id, { streak: 1, trigger: 1_600, paused: false });
      expect(set).toStrictEqual({ streak: 1, trigger: 1_600, updatedAt: new Date(now).toISOString() });
      expect(await store.getLoopGuardState(id)).toStrictEqual(set);
      expect(await store.clearLoopGuardState(id)).toBe(true);
      expect(await store.getLoopGuardState(id)).toBeUndefined();
      expect(await store.clearLoopGuardState(id)).toBe(false);
    });

    it('keeps the first pause time while the conversation stays paused, and drops it when unpaused', async () => {
      const id = await conversation();
      const pausedAt = new Date(now).toISOString();
      expect(await store.setLoopGuardState(id, { streak: 2, trigger: 1_600, paused: true })).toMatchObject({ streak: 2, pausedAt });
      now += 60_000;
      const later = await store.setLoopGuardState(id, { streak: 3, trigger: 1_600, paused: true });
      expect(later).toStrictEqual({ streak: 3, trigger: 1_600, pausedAt, updatedAt: new Date(now).toISOString() });
      expect(await store.getLoopGuardState(id)).toStrictEqual(later);
      const unpaused = await store.setLoopGuardState(id, { streak: 1, trigger: 2_000, paused: false });
      expect(unpaused).toStrictEqual({ streak: 1, trigger: 2_000, updatedAt: new Date(now).toISOString() });
    });

    it('is per conversation: setting or clearing one leaves the others alone', async () => {
      const a = await conversation();
      const b = await conversation();
      await store.setLoopGuardState(a, { streak: 2, trigger: 100, paused: true });
      await store.setLoopGuardState(b, { streak: 1, trigger: 100, paused: false });
      await store.clearLoopGuardState(b);
      expect(await store.getLoopGuardState(a)).toMatchObject({ streak: 2, pausedAt: expect.any(String) });
      expect(await store.getLoopGuardState(b)).toBeUndefined();
    });

    it('refuses a conversation nothing was appended to, naming conversationId, and stores nothing', async () => {
      const id = `conv-${randomUUID()}`;
      const attempt = store.setLoopGuardState(id, { streak: 1, trigger: 100, paused: false });
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ field: 'conversationId' });
      expect(await store.getLoopGuardState(id)).toBeUndefined();
    });

    it.each([
      ['a zero streak', { streak: 0, trigger: 100, paused: false }, 'update.streak'],
      ['a fractional streak', { streak: 1.5, trigger: 100, paused: false }, 'update.streak'],
      ['a streak over the column', { streak: 2 ** 31, trigger: 100, paused: false }, 'update.streak'],
      ['a missing trigger', { streak: 1, paused: false }, 'update.trigger'],
      ['a string trigger', { streak: 1, trigger: '100', paused: false }, 'update.trigger'],
      ['a paused flag that is not a boolean', { streak: 1, trigger: 100, paused: 'yes' }, 'update.paused'],
      ['no update at all', null, 'update'],
    ])('refuses %s naming %s and writes nothing', async (_case, update, field) => {
      const id = await conversation();
      await store.setLoopGuardState(id, { streak: 1, trigger: 100, paused: false });
      const before = await store.getLoopGuardState(id);
      const attempt = store.setLoopGuardState(id, update as never);
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ field, message: expect.stringContaining(field) });
      expect(await store.getLoopGuardState(id)).toStrictEqual(before);
    });

    it('refuses an empty conversation id in every method', async () => {
      await expect(store.getLoopGuardState('')).rejects.toMatchObject({ field: 'conversationId' });
      await expect(store.setLoopGuardState('', { streak: 1, trigger: 1, paused: false })).rejects.toMatchObject({ field: 'conversationId' });
      await expect(store.clearLoopGuardState('')).rejects.toMatchObject({ field: 'conversationId' });
    });

    it('treats hostile conversation ids as data', async () => {
      const hostile = `x' or '1'='1 -- %_\\ ${randomUUID()}`;
      await store.append(hostile, [{ role: 'user', content: 'hello' }]);
      const plain = await conversation();
      await store.setLoopGuardState(plain, { streak: 1, trigger: 100, paused: false });
      await store.setLoopGuardState(hostile, { streak: 2, trigger: 100, paused: true });
      expect(await store.getLoopGuardState(hostile)).toMatchObject({ streak: 2 });
      expect(await store.clearLoopGuardState(hostile)).toBe(true);
      expect(await store.getLoopGuardState(plain)).toMatchObject({ streak: 1 });
    });

    it('refuses calls after close', async () => {
      const { persistence, cleanup: close } = await backend.open();
      await close();
      await expect(persistence.getLoopGuardState('c')).rejects.toSatisfy((error: unknown) => MemfoldError.isInstance(error));
      await expect(persistence.clearLoopGuardState('c')).rejects.toMatchObject({ code: 'persistence_error' });
    });
  });
}
