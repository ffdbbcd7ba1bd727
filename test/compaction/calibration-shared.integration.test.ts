/**
 * A conversation's token calibration lives in the live store: a memfold reopened on the same PGlite directory, and
 * a second memfold on the same PostgreSQL database, count the conversation with the factor another one observed,
 * compact on it, and see a compaction's commit drop it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createInMemoryArchive, createInMemoryArchiveState, type InMemoryArchiveState } from '../../src/archive/in-memory/in-memory-archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold, type Memfold, type MemfoldEvent } from '../../src/memfold.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { postgresServerUrl } from '../support/backends.js';
import { sharedStore } from '../support/shared-store.js';
import { dialogue } from '../support/messages.js';

/** Trigger 1,600, warning at 1,400, target 1,000. */
const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300, targetTokens: 1_000, minFreedTokens: 200 };

const backends = (['pglite', 'postgres'] as const).filter((name) => name !== 'postgres' || postgresServerUrl() !== undefined);

for (const backend of backends) {
  describe(`${backend}: the token calibration is shared through the live store`, () => {
    let openPersistence: () => Promise<PersistenceProvider>;
    let dispose: () => Promise<void>;
    let archiveState: InMemoryArchiveState;
    const opened: Array<{ memfold: Memfold; persistence: PersistenceProvider }> = [];
    afterEach(async () => {
      for (const { memfold, persistence } of opened.splice(0)) {
        await memfold.close();
        await persistence.close();
      }
      await dispose();
    });

    async function setUp(): Promise<void> {
      archiveState = createInMemoryArchiveState();
      const store = await sharedStore(backend);
      openPersistence = () => store.openPersistence();
      dispose = () => store.dispose();
    }

    /** A memfold on the shared store (its own connection) and the shared archive, as another process would open it. */
    async function open(events: MemfoldEvent[] = []): Promise<Memfold> {
      const persistence = await openPersistence();
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

    /** A conversation under the trigger by memfold's count, calibrated over it by a usage 1.5 times that count. */
    async function calibrateOver(memfold: Memfold, id: string): Promise<number> {
      await memfold.append(id, dialogue(12));
      expect((await memfold.usage(id)).next).toBe('none');
      const own = (await memfold.context(id)).reduce((sum, m) => sum + memfold.tokens.countMessage(m), 0);
      const { factor } = await memfold.observeUsage(id, { promptTokens: Math.round(own * 1.5) });
      expect((await memfold.usage(id)).next).toBe('compact');
      return factor;
    }

    it('a reopened memfold counts with the stored factor and compacts on it; the compaction drops it', async () => {
      await setUp();
      const id = 'conv-reopened';
      const first = await open();
      const factor = await calibrateOver(first, id);
      const counted = await first.usage(id);
      await close(first);

      const events: MemfoldEvent[] = [];
      const again = await open(events);
      expect(await again.usage(id)).toStrictEqual(counted);
      expect(counted.calibration).toBe(factor);
      // The first append of this process starts its running count with the stored factor: over 1,400, a warning.
      await again.append(id, dialogue(1, 12));
      expect(events.filter((e) => e.type === 'context_warning')).toEqual([
        { type: 'context_warning', conversationId: id, tokens: (await again.usage(id)).tokens, threshold: 1_400 },
      ]);
      expect(await again.compact(id)).toMatchObject({ status: 'compacted' });
      expect(await again.persistence.getTokenCalibration(id)).toBeUndefined();
      expect((await again.usage(id)).calibration).toBe(1);
    });

    // Two instances open at once need a store both can open: one process owns a PGlite directory.
    if (backend === 'postgres') {
      it("a second memfold on the same database compacts on the first one's observation, and both see the reset", async () => {
        await setUp();
        const id = 'conv-shared';
        const a = await open();
        const b = await open();
        const factor = await calibrateOver(a, id);
        expect(await b.usage(id)).toMatchObject({ calibration: factor, next: 'compact' });
        expect(await b.compact(id)).toMatchObject({ status: 'compacted' });
        expect((await a.usage(id)).calibration).toBe(1);
        expect(await a.compact(id)).toMatchObject({ status: 'skipped', skipReason: 'below_trigger' });
      });
    }
  });
}
