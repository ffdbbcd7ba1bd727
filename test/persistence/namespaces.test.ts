import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createInMemoryPersistenceState } from '../../src/persistence/in-memory/in-memory-tables.js';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { copyPgliteTemplate, createPostgresTestDatabase, storeBackends, type BackendName } from '../support/backends.js';

/** Opens stores with different namespaces on ONE database (PGlite: one at a time, it has one owner; memory: one shared state). */
interface SharedDatabase {
  open(namespace: string): Promise<PersistenceProvider>;
  dispose(): Promise<void>;
}

async function sharedDatabase(name: BackendName): Promise<SharedDatabase> {
  if (name === 'memory') {
    // One state stands for one database: it outlives the stores opened on it.
    const state = createInMemoryPersistenceState();
    return { open: async (namespace) => createInMemoryPersistence({ state, namespace }), dispose: async () => undefined };
  }
  if (name === 'pglite') {
    const { root, dataDir } = await copyPgliteTemplate();
    return {
      open: (namespace) => createKyselyPersistence({ dialect: 'pglite', dataDir, namespace }),
      dispose: () => rm(root, { recursive: true, force: true }),
    };
  }
  const database = await createPostgresTestDatabase(process.env.DATABASE_URL!);
  return { open: (namespace) => createKyselyPersistence({ dialect: 'postgres', databaseUrl: database.url, namespace }), dispose: database.drop };
}

for (const backend of storeBackends()) {
  describe(`${backend.name}: namespaces`, () => {
    let shared: SharedDatabase;
    beforeAll(async () => {
      shared = await sharedDatabase(backend.name);
    });
    afterAll(() => shared.dispose());

    it('keeps conversations, seqs, clip-archives and operations of one namespace invisible to another', async () => {
      const red = await shared.open('red');
      await red.append('same-id', [
        { id: 'm1', role: 'user', content: 'red 1' },
        { id: 'm2', role: 'user', content: 'red 2' },
      ]);
      await red.commitCompaction({ conversationId: 'same-id', operationId: 'op-red', deleteIds: ['m1'], clipArchive: '[Context Summary red]', labels: [] });
      await red.close();

      const blue = await shared.open('blue');
      expect(await blue.loadHistory('same-id')).toEqual([]);
      expect(await blue.listConversations()).toEqual([]);
      expect(await blue.listOperations('same-id')).toEqual([]);
      const [first] = await blue.append('same-id', [{ id: 'm1', role: 'user', content: 'blue 1' }]);
      expect(first!.seq).toBe(1);
      expect(await blue.deleteByIds('same-id', ['m2'])).toBe(0);
      await expect(
        blue.commitCompaction({ conversationId: 'same-id', operationId: 'op-red', deleteIds: ['m1'], clipArchive: 'x', labels: [] }),
      ).rejects.toMatchObject({ field: 'commit.operationId' });
      await blue.close();

      const again = await shared.open('red');
      expect((await again.loadHistory('same-id')).map((m) => m.content)).toEqual(['[Context Summary red]', 'red 2']);
      expect(await again.listConversations()).toEqual([{ id: 'same-id', messageCount: 1, updatedAt: expect.any(String) }]);
      await again.close();
    });

    it("keeps one namespace's loop guard record from another", async () => {
      const red = await shared.open('red');
      await red.append('guarded', [{ role: 'user', content: 'red' }]);
      await red.setLoopGuardState('guarded', { streak: 2, trigger: 100, paused: true });
      await red.close();
      const blue = await shared.open('blue');
      await blue.append('guarded', [{ role: 'user', content: 'blue' }]);
      expect(await blue.getLoopGuardState('guarded')).toBeUndefined();
      expect(await blue.clearLoopGuardState('guarded')).toBe(false);
      await blue.close();
      const again = await shared.open('red');
      expect(await again.getLoopGuardState('guarded')).toMatchObject({ streak: 2, pausedAt: expect.any(String) });
      await again.close();
    });

    it("keeps one namespace's token calibration from another, and a commit in one drops only its own", async () => {
      const red = await shared.open('red');
      await red.append('calibrated', [{ role: 'user', content: 'red' }]);
      await red.setTokenCalibration('calibrated', { factor: 1.5, promptTokens: 150, estimatedTokens: 100 });
      await red.close();
      const blue = await shared.open('blue');
      await blue.append('calibrated', [{ id: 'b1', role: 'user', content: 'blue' }]);
      expect(await blue.getTokenCalibration('calibrated')).toBeUndefined();
      await blue.setTokenCalibration('calibrated', { factor: 3, promptTokens: 300, estimatedTokens: 100 });
      await blue.commitCompaction({ conversationId: 'calibrated', operationId: 'op-blue', deleteIds: ['b1'], clipArchive: '[Context Summary]', labels: [] });
      expect(await blue.getTokenCalibration('calibrated')).toBeUndefined();
      await blue.close();
      const again = await shared.open('red');
      expect(await again.getTokenCalibration('calibrated')).toMatchObject({ factor: 1.5 });
      await again.close();
    });

    it('uses the namespace "default" when none is given', async () => {
      const implicit = await shared.open(undefined as unknown as string);
      await implicit.append('c', [{ role: 'user', content: 'x' }]);
      await implicit.close();
      const explicit = await shared.open('default');
      expect((await explicit.loadHistory('c')).map((m) => m.content)).toEqual(['x']);
      await explicit.close();
    });
  });
}
