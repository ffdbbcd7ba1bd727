/**
 * The loop guard's pause lives in the live store: memfold instances sharing one store (one PostgreSQL database,
 * one in-memory state) see each other's pause and resume, and a new instance on the same store still sees it.
 * PGlite has one owning process, so there only a reopened instance is checked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createInMemoryArchive, createInMemoryArchiveState, type InMemoryArchiveState } from '../../src/archive/in-memory/in-memory-archive.js';
import type { NewMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold, type Memfold, type MemfoldEvent } from '../../src/memfold.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { postgresServerUrl } from '../support/backends.js';
import { sharedStore, type SharedStore } from '../support/shared-store.js';

const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };

/** ~600 tokens a message with a tail of 4 messages: no compaction gets under the trigger (1,600). */
const big = (turn: number): NewMessage[] => [
  { role: 'user', content: `Question ${turn}: ${'a long pasted document line '.repeat(85)}` },
  { role: 'assistant', content: `Answer ${turn}: ${'a long detailed reply sentence '.repeat(80)}` },
];

const backends = (['pglite', 'postgres', 'memory'] as const).filter((name) => name !== 'postgres' || postgresServerUrl() !== undefined);

for (const backend of backends) {
  describe(`${backend}: the loop guard's pause is shared through the live store`, () => {
    let store: SharedStore | undefined;
    let archiveState: InMemoryArchiveState;
    const opened: Array<{ memfold: Memfold; persistence: PersistenceProvider }> = [];
    afterEach(async () => {
      if (store === undefined) return;
      for (const { memfold, persistence } of opened.splice(0)) {
        await memfold.close();
        await persistence.close();
      }
      await store.dispose();
      store = undefined;
    });

    /** A memfold on the shared store (its own connection) and the shared archive, as another process would open it. */
    async function open(events: MemfoldEvent[] = []): Promise<Memfold> {
      const persistence = await store!.openPersistence();
      const memfold = await createMemfold({
        env: {},
        tokens: createTokenCounter({ mode: 'chars4' }),
        compaction: settings,
        persistence,
        archive: createInMemoryArchive({ embedder: createHashingEmbedder(), state: archiveState }),
        onEvent: (event) => events.push(event),
      });
      opened.push({ memfold, persistence });
      return memfold;
    }

    async function close(memfold: Memfold): Promise<void> {
      const [entry] = opened.splice(
        opened.findIndex((o) => o.memfold === memfold),
        1,
      );
      await memfold.close();
      await entry!.persistence.close();
    }

    /**
     * Two compactions that stay over the trigger (the second pauses automatic compaction), then one more turn, so
     * that the planner would compact again: only the pause stops it.
     */
    async function pause(memfold: Memfold, id: string, events: MemfoldEvent[], turn: number): Promise<void> {
      const pausedBefore = events.filter((e) => e.type === 'auto_compaction_paused').length;
      await memfold.append(id, [turn, turn + 1, turn + 2].flatMap(big));
      expect((await memfold.compact(id)).status).toBe('compacted');
      await memfold.append(id, big(turn + 3));
      expect((await memfold.compact(id)).status).toBe('compacted');
      expect(events.filter((e) => e.type === 'auto_compaction_paused')).toHaveLength(pausedBefore + 1);
      await memfold.append(id, big(turn + 4));
    }

    it('a pause set by one instance is seen by another; resume() in either lifts it for both; a new instance still sees it', async () => {
      store = await sharedStore(backend);
      archiveState = createInMemoryArchiveState();
      const id = 'conv-guarded';
      const eventsA: MemfoldEvent[] = [];
      const a = await open(eventsA);
      await pause(a, id, eventsA, 0);
      expect(await a.compactor.isPaused(id)).toBe(true);

      if (store.concurrent) {
        const eventsB: MemfoldEvent[] = [];
        const b = await open(eventsB);
        expect(await b.compactor.isPaused(id)).toBe(true);
        expect((await b.usage(id)).next).toBe('paused');
        expect(await b.compact(id)).toMatchObject({ status: 'skipped', skipReason: 'paused' });
        await b.compactor.resume(id);
        expect(await a.compactor.isPaused(id)).toBe(false);
        expect(await b.compactor.isPaused(id)).toBe(false);
        expect((await a.usage(id)).next).toBe('compact');
        // Paused again from the other side, and lifted by the first.
        await pause(b, id, eventsB, 10);
        expect(await a.compactor.isPaused(id)).toBe(true);
        await a.compactor.resume(id);
        expect(await b.compactor.isPaused(id)).toBe(false);
        await close(b);
        await pause(a, id, eventsA, 20);
      }

      await close(a);
      const eventsC: MemfoldEvent[] = [];
      const c = await open(eventsC);
      expect(await c.compactor.isPaused(id)).toBe(true);
      expect((await c.usage(id)).next).toBe('paused');
      expect(await c.compact(id)).toMatchObject({ status: 'skipped', skipReason: 'paused' });
      // Forced compaction still runs, and the pause holds while it leaves the context over the trigger.
      expect((await c.compact(id, { force: true })).status).toBe('compacted');
      expect(await c.compactor.isPaused(id)).toBe(true);
      expect(eventsC.filter((e) => e.type === 'auto_compaction_paused')).toEqual([]);
      await c.compactor.resume(id);
      expect(await c.persistence.getLoopGuardState(id)).toBeUndefined();
      expect(await c.compactor.isPaused(id)).toBe(false);
    });

    // Two instances open at once need a store both can open: one process owns a PGlite directory, so PGlite has no such case.
    if (backend !== 'pglite') {
      it('the streak adds up across instances: one ineffective compaction in each pauses both', async () => {
        store = await sharedStore(backend);
        archiveState = createInMemoryArchiveState();
        const id = 'conv-streak';
        const eventsA: MemfoldEvent[] = [];
        const eventsB: MemfoldEvent[] = [];
        const a = await open(eventsA);
        const b = await open(eventsB);
        await a.append(id, [0, 1, 2].flatMap(big));
        expect((await a.compact(id)).status).toBe('compacted');
        expect(await a.persistence.getLoopGuardState(id)).toMatchObject({ streak: 1, trigger: a.compactor.settings.trigger });
        expect(await b.compactor.isPaused(id)).toBe(false);
        await b.append(id, big(3));
        expect((await b.compact(id)).status).toBe('compacted');
        expect(eventsB.filter((e) => e.type === 'auto_compaction_paused')).toHaveLength(1);
        expect(eventsA).not.toContainEqual(expect.objectContaining({ type: 'auto_compaction_paused' }));
        expect(await a.compactor.isPaused(id)).toBe(true);
      });
    }

    it('a streak counted against another trigger does not pause a compactor with a different one', async () => {
      store = await sharedStore(backend);
      archiveState = createInMemoryArchiveState();
      const id = 'conv-retuned';
      const events: MemfoldEvent[] = [];
      const a = await open(events);
      await pause(a, id, events, 0);
      await close(a);
      const persistence = await store.openPersistence();
      const wider = await createMemfold({
        env: {},
        tokens: createTokenCounter({ mode: 'chars4' }),
        compaction: { ...settings, contextWindow: 2_400 },
        persistence,
        archive: createInMemoryArchive({ embedder: createHashingEmbedder(), state: archiveState }),
      });
      opened.push({ memfold: wider, persistence });
      expect(await wider.compactor.isPaused(id)).toBe(false);
    });
  });
}
