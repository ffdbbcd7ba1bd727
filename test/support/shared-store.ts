/** One live store that several memfolds open in turn or at once, as processes sharing a database would. */
import { rm } from 'node:fs/promises';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createInMemoryPersistenceState } from '../../src/persistence/in-memory/in-memory-tables.js';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { copyPgliteTemplate, createPostgresTestDatabase, postgresServerUrl } from './backends.js';

/** One live store, opened as often as a test asks; `concurrent` when two instances may hold it at once. */
export interface SharedStore {
  concurrent: boolean;
  openPersistence(): Promise<PersistenceProvider>;
  dispose(): Promise<void>;
}

export async function sharedStore(name: 'pglite' | 'postgres' | 'memory'): Promise<SharedStore> {
  if (name === 'memory') {
    const state = createInMemoryPersistenceState();
    return { concurrent: true, openPersistence: async () => createInMemoryPersistence({ state }), dispose: async () => undefined };
  }
  if (name === 'pglite') {
    const { root, dataDir } = await copyPgliteTemplate();
    return {
      concurrent: false,
      openPersistence: () => createKyselyPersistence({ dialect: 'pglite', dataDir }),
      dispose: () => rm(root, { recursive: true, force: true }),
    };
  }
  const database = await createPostgresTestDatabase(postgresServerUrl()!);
  return { concurrent: true, openPersistence: () => createKyselyPersistence({ dialect: 'postgres', databaseUrl: database.url }), dispose: database.drop };
}
