/**
 * The persistence backends the suites run against:
 *   for (const backend of storeBackends()) describe(`${backend.name}: ...`, ...)
 * - pglite: a copy of the global setup's migrated template directory (fast; no initdb).
 * - postgres: a fresh database `memfold_t_<random>` on the server at DATABASE_URL, dropped on cleanup.
 * - memory: `createInMemoryPersistence` on a fresh state (no files, no global setup).
 * `storeBackends()` gives all three: the port's contract suites (test/persistence/) run on each.
 * `persistenceBackends()` gives the database ones (`sql: true`), for suites that need a real database
 * (raw SQL, child processes, homes on disk). MEMFOLD_TEST_BACKENDS=pglite,postgres,memory filters both.
 * In CI (CI=true) DATABASE_URL is required.
 */
import { randomBytes } from 'node:crypto';
import { cpSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createInMemoryPersistenceState, type InMemoryPersistenceState } from '../../src/persistence/in-memory/in-memory-tables.js';
import { openKyselyStore } from '../../src/persistence/kysely/kysely-store.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';

export type BackendName = 'pglite' | 'postgres' | 'memory';
/** The backends with a database behind them. */
export type DatabaseBackendName = Exclude<BackendName, 'memory'>;

export interface OpenedBackend {
  persistence: PersistenceProvider;
  /** Close the store and delete its database (PGlite copy or PostgreSQL database). */
  cleanup(): Promise<void>;
  /**
   * Run raw SQL on the store's own database, e.g. to provoke real failures (a trigger that raises).
   * On PGlite it shares the store's single connection: never call it inside `transaction()`.
   * Only on backends with `sql: true`; the memory backend throws.
   */
  exec(statement: string): Promise<void>;
}

/** What a test may set on the store it opens. */
export interface StoreOptions {
  namespace?: string;
  clock?: () => Date;
}

export interface TestBackend<Name extends BackendName = BackendName> {
  name: Name;
  /** A SQL database is behind the store: `exec` works, and failures can be provoked with triggers. */
  sql: boolean;
  open(options?: StoreOptions): Promise<OpenedBackend>;
}

const ALL: readonly BackendName[] = ['pglite', 'postgres', 'memory'];

/** Every adapter of the port, in a fixed order (pglite, postgres, memory): the contract suites run on each. */
export function storeBackends(): TestBackend[] {
  const backends: TestBackend[] = persistenceBackends();
  if (selectedBackends().includes('memory')) backends.push({ name: 'memory', sql: false, open: openMemory });
  return backends;
}

/** The database backends to test, in a fixed order (pglite, then postgres). */
export function persistenceBackends(): Array<TestBackend<DatabaseBackendName>> {
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const wanted = selectedBackends();
  if (wanted.includes('postgres') && databaseUrl === undefined) {
    if (process.env.CI === 'true') {
      throw new Error('DATABASE_URL is required in CI: the PostgreSQL store tests must run there, never skip');
    }
    if ((process.env.MEMFOLD_TEST_BACKENDS ?? '').trim() !== '') {
      throw new Error('MEMFOLD_TEST_BACKENDS asks for postgres but DATABASE_URL is not set');
    }
  }
  const backends: Array<TestBackend<DatabaseBackendName>> = [];
  if (wanted.includes('pglite')) backends.push({ name: 'pglite', sql: true, open: openPglite });
  if (wanted.includes('postgres') && databaseUrl !== undefined) {
    backends.push({ name: 'postgres', sql: true, open: (options) => openPostgres(databaseUrl, options) });
  }
  return backends;
}

/**
 * The PostgreSQL server for suites that need one beyond the store tests (child processes, several
 * processes at once): DATABASE_URL, required in CI; undefined elsewhere when unset (the suite is skipped).
 */
export function postgresServerUrl(): string | undefined {
  const databaseUrl = process.env.DATABASE_URL || undefined;
  if (databaseUrl === undefined && process.env.CI === 'true') {
    throw new Error('DATABASE_URL is required in CI: the PostgreSQL suites must run there, never skip');
  }
  return databaseUrl;
}

function selectedBackends(): BackendName[] {
  const raw = process.env.MEMFOLD_TEST_BACKENDS;
  if (raw === undefined || raw.trim() === '') return [...ALL];
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  for (const name of names) {
    if (!ALL.includes(name as BackendName)) {
      throw new Error(`MEMFOLD_TEST_BACKENDS: unknown backend ${JSON.stringify(name)} (known: ${ALL.join(', ')})`);
    }
  }
  return ALL.filter((name) => names.includes(name));
}

/**
 * An in-memory store on a state the caller may share (namespaces on one "database", a store opened again).
 * Fresh state unless given; cleanup closes the store.
 */
export async function openMemory(options: StoreOptions & { state?: InMemoryPersistenceState; maxMessageBytes?: number } = {}): Promise<OpenedBackend> {
  const persistence = createInMemoryPersistence({ state: createInMemoryPersistenceState(), ...options });
  return {
    persistence,
    exec: async () => {
      throw new Error('exec: the memory backend has no SQL (check backend.sql)');
    },
    cleanup: () => persistence.close(),
  };
}

/** A fresh copy of the migrated PGlite template in a temp folder; the caller removes `root`. */
export async function copyPgliteTemplate(): Promise<{ root: string; dataDir: string }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'memfold-pglite-'));
  const dataDir = path.join(root, 'pg');
  copyPgliteTemplateTo(dataDir);
  return { root, dataDir };
}

/**
 * A fresh copy of the migrated PGlite template at `dataDir` (e.g. a home's `pg/`), which must not exist yet.
 * Synchronous on purpose: for a thousand small files cpSync is several times faster than fs.promises.cp.
 */
export function copyPgliteTemplateTo(dataDir: string): void {
  cpSync(inject('pgliteTemplateDir'), dataDir, { recursive: true });
}

async function openPglite(options: StoreOptions = {}): Promise<OpenedBackend> {
  const { root, dataDir } = await copyPgliteTemplate();
  return openStore({ dialect: 'pglite', dataDir, ...options }, () => rm(root, { recursive: true, force: true }));
}

/** Open the store on a prepared place; `dispose` removes that place on cleanup, or at once if opening fails. */
async function openStore(store: Parameters<typeof openKyselyStore>[0], dispose: () => Promise<void>): Promise<OpenedBackend> {
  try {
    const { persistence, db } = await openKyselyStore(store);
    return {
      persistence,
      exec: async (statement) => void (await sql.raw(statement).execute(db)),
      async cleanup() {
        try {
          await persistence.close();
        } finally {
          await dispose();
        }
      },
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** Create an empty database `memfold_t_<random>` on the server; returns its URL and a dropper. */
export async function createPostgresTestDatabase(databaseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `memfold_t_${randomBytes(6).toString('hex')}`;
  await withAdminClient(databaseUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withAdminClient(databaseUrl, (client) => client.query(`drop database if exists ${name} with (force)`)),
  };
}

async function withAdminClient(databaseUrl: string, fn: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}

async function openPostgres(databaseUrl: string, options: StoreOptions = {}): Promise<OpenedBackend> {
  const database = await createPostgresTestDatabase(databaseUrl);
  return openStore({ dialect: 'postgres', databaseUrl: database.url, ...options }, () => database.drop());
}
