/**
 * Embedded PGlite under Kysely's own PostgresDialect, through PGlite's node-postgres bridge
 * (`createPgConfig`), so both backends run the very same pg code paths. The bridge's pool has one
 * connection: a transaction holds it, and nothing may ask for a second one meanwhile.
 */
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { MemfoldError } from '../../errors.js';
import { DEFAULT_DATABASE_SCHEMA, searchPathStatement } from '../database-schema.js';
import type { StoreDialect } from '../kysely/store-dialect.js';
import { acquireDataDirLock } from './pglite-lock-file.js';
import { seedDataDir } from './pglite-seed.js';
import type { TemplateSource } from './pglite-template.js';

export interface PgliteDialectOptions {
  /** Validated by the caller. Default `memfold`. */
  schema?: string;
  /** Where a new data directory's template is (default the package's), or false for `initdb` always. */
  template?: TemplateSource | false;
}

/**
 * PostgreSQL's buffer pool. PGlite allocates and touches it whole when it starts: at PostgreSQL's default, 128MB, it
 * was 100 of the 280 MiB PGlite takes (measured: 282 MiB peak RSS for an open, 178 with 32MB). Pages beyond it are
 * read again from the data directory's files, which the operating system caches.
 */
export const PGLITE_SHARED_BUFFERS = '32MB';

/**
 * Lock `dataDir`, open the PGlite database in it (a new one seeded from the shipped template when it fits, else made
 * by `initdb`), and wrap it in a dialect whose connection resolves names in `schema` alone.
 */
export async function createPgliteDialect(dataDir: string, options: PgliteDialectOptions = {}): Promise<StoreDialect> {
  const schema = options.schema ?? DEFAULT_DATABASE_SCHEMA;
  // Loaded here, not at import time: importing memfold must not pay for a backend it may not use.
  const [{ PGlite }, { createPgConfig }, { PostgresDialect, CompiledQuery }, { default: pgModule }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/node-postgres'),
    import('kysely'),
    import('pg'),
  ]);
  const lock = await acquireDataDirLock(dataDir);
  let pglite: PGlite;
  try {
    if (options.template !== false) await seedDataDir(dataDir, schema, options.template);
    pglite = await PGlite.create({ dataDir, startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`] });
  } catch (error) {
    await lock.release();
    throw new MemfoldError('persistence_error', `Cannot open PGlite data directory ${dataDir}: ${(error as Error).message}`, {
      cause: error,
      details: { dataDir },
    });
  }
  // The config object carries the bridge connection and poolSize 1; pg.Pool's types do not know it.
  const pool = new pgModule.Pool(createPgConfig(pglite) as unknown as pg.PoolConfig);
  pool.on('error', () => {});
  return {
    backend: 'pglite',
    dialect: new PostgresDialect({
      pool,
      onCreateConnection: async (connection) => void (await connection.executeQuery(CompiledQuery.raw(searchPathStatement(schema)))),
    }),
    singleConnection: true,
    async close() {
      try {
        await pglite.close();
      } finally {
        await lock.release();
      }
    },
  };
}
