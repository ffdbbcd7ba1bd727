import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { createPostgresTestDatabase, persistenceBackends, storeBackends } from '../support/backends.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

for (const backend of storeBackends()) {
  describe(`${backend.name}: withConversationLock`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    it('answers {acquired:false} to a second caller while held, and lets it wait when asked', async () => {
      const id = `conv-${randomUUID()}`;
      const release = deferred();
      const entered = deferred();
      const events: string[] = [];
      const first = store.withConversationLock(id, async () => {
        entered.resolve();
        await release.promise;
        events.push('first done');
        return 1;
      });
      await entered.promise;
      expect(await store.withConversationLock(id, async () => 'never')).toEqual({ acquired: false });
      // Another conversation is not blocked.
      expect(await store.withConversationLock(`${id}-other`, async () => 'free')).toEqual({ acquired: true, value: 'free' });
      const waiter = store.withConversationLock(
        id,
        async () => {
          events.push('waiter ran');
          return 2;
        },
        { wait: true },
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(events).toEqual([]);
      release.resolve();
      expect(await first).toEqual({ acquired: true, value: 1 });
      expect(await waiter).toEqual({ acquired: true, value: 2 });
      expect(events).toEqual(['first done', 'waiter ran']);
      // Free again.
      expect(await store.withConversationLock(id, async () => 3)).toEqual({ acquired: true, value: 3 });
    });

    it('releases the lock when fn throws, and passes the error on', async () => {
      const id = `conv-${randomUUID()}`;
      const boom = new Error('fn failed');
      await expect(
        store.withConversationLock(id, async () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store.withConversationLock(id, async () => 'again')).toEqual({ acquired: true, value: 'again' });
    });

    it('bounds a wait by timeoutMs or signal, naming the holder, and the aborted waiter leaves the queue', async () => {
      const id = `conv-${randomUUID()}`;
      const release = deferred();
      const entered = deferred();
      const held = store.withConversationLock(
        id,
        async () => {
          entered.resolve();
          await release.promise;
        },
        { purpose: 'the first holder' },
      );
      await entered.promise;
      await expect(store.withConversationLock(id, async () => 'late', { wait: true, timeoutMs: 10 })).rejects.toThrow(
        new RegExp(`^Conversation "${id}": waited \\d+ ms for the conversation's lock held by the first holder.*gave up after lockTimeoutMs \\(10 ms\\)`),
      );
      const controller = new AbortController();
      const aborted = store.withConversationLock(id, async () => 'never', { wait: true, signal: controller.signal });
      const next = store.withConversationLock(id, async () => 'next', { wait: true });
      controller.abort();
      await expect(aborted).rejects.toMatchObject({ code: 'busy', details: { conversationId: id, reason: 'aborted' } });
      release.resolve();
      await held;
      expect(await next).toEqual({ acquired: true, value: 'next' });
      await expect(store.withConversationLock(id, async () => 1, { wait: true, timeoutMs: -1 })).rejects.toThrow(/lockTimeoutMs/);
    });

    it('lets fn use the store (and transactions) while holding the lock', async () => {
      const id = `conv-${randomUUID()}`;
      const result = await store.withConversationLock(id, async () => {
        await store.append(id, [{ role: 'user', content: 'inside' }]);
        return store.transaction((tx) => tx.loadHistory(id));
      });
      expect(result.acquired && result.value.map((m) => m.content)).toEqual(['inside']);
    });
  });
}

if (persistenceBackends().some((backend) => backend.name === 'postgres')) {
  describe('postgres: withConversationLock across processes (advisory lock)', () => {
    let database: Awaited<ReturnType<typeof createPostgresTestDatabase>>;
    let a: PersistenceProvider;
    let b: PersistenceProvider;
    beforeAll(async () => {
      database = await createPostgresTestDatabase(process.env.DATABASE_URL!);
      // Two stores, two pools: the in-process mutex cannot see across them, only PostgreSQL can.
      a = await createKyselyPersistence({ dialect: 'postgres', databaseUrl: database.url });
      b = await createKyselyPersistence({ dialect: 'postgres', databaseUrl: database.url });
    });
    afterAll(async () => {
      await a.close();
      await b.close();
      await database.drop();
    });

    it('excludes a holder using another pool, scoped by namespace, and hands over when released', async () => {
      const id = `conv-${randomUUID()}`;
      const release = deferred();
      const entered = deferred();
      const held = a.withConversationLock(id, async () => {
        entered.resolve();
        await release.promise;
        return 'a';
      });
      await entered.promise;
      expect(await b.withConversationLock(id, async () => 'b')).toEqual({ acquired: false });
      const other = await createKyselyPersistence({ dialect: 'postgres', databaseUrl: database.url, namespace: 'elsewhere' });
      try {
        expect(await other.withConversationLock(id, async () => 'ns')).toEqual({ acquired: true, value: 'ns' });
      } finally {
        await other.close();
      }
      const waiting = b.withConversationLock(id, async () => 'b waited', { wait: true });
      release.resolve();
      expect(await held).toEqual({ acquired: true, value: 'a' });
      expect(await waiting).toEqual({ acquired: true, value: 'b waited' });
      expect(await a.withConversationLock(id, async () => 'a again')).toEqual({ acquired: true, value: 'a again' });
    });

    it('gives concurrent appends from two pools unique, contiguous seqs', async () => {
      const id = `conv-${randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).append(id, [{ role: 'user', content: `m${i}` }])));
      expect(results.map((r) => r[0]!.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });
  });
}
