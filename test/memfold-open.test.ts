/**
 * createMemfold checks every setting before it opens a store, and closes what it opened when opening fails
 * part-way: a failed open never keeps a PGlite directory locked (or PostgreSQL connections open), so the same
 * home opens again in the same process. Adapters passed in are never closed by it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeConfig } from '../src/config.js';
import { InvalidConfigError, MemfoldError } from '../src/errors.js';
import { createMemfold, type MemfoldOptions } from '../src/memfold.js';
import type { Summarizer } from '../src/summarizer/summarizer.js';
import { copyPgliteTemplate, createPostgresTestDatabase, persistenceBackends, postgresServerUrl } from './support/backends.js';

interface Home {
  config: Partial<RuntimeConfig>;
  /** Connections the store holds now (PostgreSQL only). */
  connections?: () => Promise<number>;
  cleanup(): Promise<void>;
}

async function pgliteHome(): Promise<Home> {
  // `{root}/pg` is a migrated PGlite directory: the folder createMemfold opens for home `root`.
  const { root } = await copyPgliteTemplate();
  return { config: { home: root }, cleanup: () => rm(root, { recursive: true, force: true }) };
}

async function postgresHome(serverUrl: string): Promise<Home> {
  const database = await createPostgresTestDatabase(serverUrl);
  const home = await mkdtemp(path.join(os.tmpdir(), 'memfold-open-'));
  const name = new URL(database.url).pathname.slice(1);
  return {
    config: { home, databaseUrl: database.url },
    async connections() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: string }>('select count(*) as n from pg_stat_activity where datname = $1', [name]);
        return Number(rows[0]!.n);
      } finally {
        await client.end();
      }
    },
    async cleanup() {
      await database.drop();
      await rm(home, { recursive: true, force: true });
    },
  };
}

const homes = persistenceBackends().map((backend) => ({
  name: backend.name,
  open: backend.name === 'pglite' ? pgliteHome : () => postgresHome(postgresServerUrl()!),
}));

/** A summarizer whose window leaves no room for a chunk: the compactor refuses it after the stores opened. */
const tinyModel: Summarizer = {
  id: 'tiny',
  contextWindow: 300,
  summarize: () => Promise.reject(new Error('never called')),
};

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function openHome(open: () => Promise<Home>): Promise<Home> {
  const home = await open();
  cleanups.push(home.cleanup);
  return home;
}

/** Opening the home works, and append + context run on it: the failed attempt left nothing behind. */
async function expectHomeOpens(home: Home): Promise<void> {
  const memfold = await createMemfold({ config: home.config, env: {} });
  try {
    await memfold.append('c1', [{ role: 'user', content: 'still here' }]);
    expect((await memfold.context('c1')).map((m) => m.content)).toEqual(['still here']);
  } finally {
    await memfold.close();
  }
}

for (const { name, open } of homes) {
  describe(`${name}: createMemfold validates before opening and closes on failure`, () => {
    it.each<[string, Partial<MemfoldOptions>, string]>([
      ['a context window below the minimum', { compaction: { contextWindow: 10 } }, 'compaction.contextWindow'],
      ['a trigger above the window', { compaction: { contextWindow: 4_000, trigger: 5_000 } }, 'compaction.trigger'],
      ['an unknown compaction setting', { compaction: { window: 4_000 } as never }, 'compaction.window'],
      ['a compaction mode other than delete or overlay', { compaction: { mode: 'soft' as never } }, 'compaction.mode'],
      ['a runtime override of the wrong type', { config: { modelTimeoutMs: -5 } }, 'config.modelTimeoutMs'],
      ['a flag that is not a boolean', { reconcileOnOpen: 'yes' as never }, 'reconcileOnOpen'],
    ])('%s throws InvalidConfigError naming the field, and the home opens again', async (_case, bad, field) => {
      const home = await openHome(open);
      const error = await createMemfold({ ...bad, config: { ...home.config, ...bad.config }, env: {} }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidConfigError);
      expect((error as InvalidConfigError).field).toBe(field);
      expect((error as Error).message).toContain(field);
      if (home.connections) expect(await home.connections()).toBe(0);
      await expectHomeOpens(home);
    });

    it('an archive that cannot open (LANCEDB_URI is a file) fails the open and releases the live store', async () => {
      const home = await openHome(open);
      const file = path.join(home.config.home!, 'not-a-folder');
      await writeFile(file, 'x');
      await expect(createMemfold({ config: home.config, env: { LANCEDB_URI: file } })).rejects.toThrow();
      if (home.connections) expect(await home.connections()).toBe(0);
      await expectHomeOpens(home);
    });

    it('a failure after both stores opened (a summarizer window too small for a chunk) closes them', async () => {
      const home = await openHome(open);
      const error = await createMemfold({ config: home.config, env: {}, summarizer: tinyModel }).catch((e: unknown) => e);
      expect(MemfoldError.isInstance(error) && error.code).toBe('invalid_config');
      expect((error as Error).message).toContain('compaction.summarizerInputShare');
      if (home.connections) expect(await home.connections()).toBe(0);
      await expectHomeOpens(home);
    });
  });
}

describe('adapters passed in', () => {
  it('are left open when opening fails: the caller owns them', async () => {
    const [backend] = persistenceBackends();
    const { persistence, cleanup } = await backend!.open();
    cleanups.push(cleanup);
    const lancedb = await mkdtemp(path.join(os.tmpdir(), 'memfold-open-l-'));
    cleanups.push(() => rm(lancedb, { recursive: true, force: true }));
    await expect(createMemfold({ persistence, summarizer: tinyModel, config: { lancedbUri: lancedb }, env: {} })).rejects.toThrow(/summarizerInputShare/);
    const [stored] = await persistence.append('c2', [{ role: 'user', content: 'the store is still open' }]);
    expect(stored!.content).toBe('the store is still open');
  });
});

describe('pglite: one open of a home per process', () => {
  const fifty = (tag: string) => Array.from({ length: 50 }, (_, i) => ({ role: 'user' as const, content: `${tag} ${i}` }));

  it('two concurrent opens of one home: exactly one resolves, the other is refused naming the home, and every acknowledged append survives', async () => {
    const home = await openHome(pgliteHome);
    const opened = await Promise.allSettled([createMemfold({ config: home.config, env: {} }), createMemfold({ config: home.config, env: {} })]);
    const winners = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const refusals = opened.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    try {
      expect(winners).toHaveLength(1);
      expect(refusals).toHaveLength(1);
      expect(MemfoldError.isInstance(refusals[0]) && refusals[0].code).toBe('busy');
      expect((refusals[0] as Error).message).toContain(path.join(home.config.home!, 'pg'));
      expect((refusals[0] as Error).message).toContain('this process');
      await winners[0]!.append('x', fifty('a'));
      await winners[0]!.append('x', fifty('b'));
    } finally {
      for (const memfold of winners) await memfold.close();
    }
    const again = await createMemfold({ config: home.config, env: {} });
    try {
      expect((await again.history('x')).map((m) => m.content)).toEqual([...fifty('a'), ...fifty('b')].map((m) => m.content));
    } finally {
      await again.close();
    }
  });

  it('a second open while the first is open is refused, and the first keeps its lock', async () => {
    const home = await openHome(pgliteHome);
    const first = await createMemfold({ config: home.config, env: {} });
    try {
      await expect(createMemfold({ config: home.config, env: {} })).rejects.toMatchObject({ code: 'busy', message: expect.stringContaining('this process') });
      await first.append('x', fifty('a'));
    } finally {
      await first.close();
    }
    const again = await createMemfold({ config: home.config, env: {} });
    try {
      expect(await again.history('x')).toHaveLength(50);
    } finally {
      await again.close();
    }
  });
});
