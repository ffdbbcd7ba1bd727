/** PostgreSQL through a `pg` pool, under Kysely's PostgresDialect. */
import { DEFAULT_DATABASE_SCHEMA, searchPathStatement } from '../database-schema.js';
import type { StoreDialect } from '../kysely/store-dialect.js';
import { lossReportingPool, reserveSession, watchConnectionLoss } from './postgres-connection-loss.js';

/** Connections per store (pg's own default). */
export const POSTGRES_POOL_SIZE = 10;

/**
 * A dialect for the server at `databaseUrl` (`postgres://user@host:5432/db`) whose connections resolve names in
 * `schema` alone (default `memfold`; validated by the caller).
 */
export async function createPostgresDialect(databaseUrl: string, options: { schema?: string } = {}): Promise<StoreDialect> {
  // Loaded here, not at import time: importing memfold must not pay for a backend it may not use.
  const [{ PostgresDialect, CompiledQuery }, { default: pg }] = await Promise.all([import('kysely'), import('pg')]);
  const setSearchPath = CompiledQuery.raw(searchPathStatement(options.schema ?? DEFAULT_DATABASE_SCHEMA));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POSTGRES_POOL_SIZE });
  // A lost connection, idle or checked out, fails the operation in flight and never the process.
  watchConnectionLoss(pool);
  return {
    backend: 'postgres',
    // Set on each new connection before its first use; the pool never resets it.
    dialect: new PostgresDialect({
      pool: lossReportingPool(pool),
      onCreateConnection: async (connection) => void (await connection.executeQuery(setSearchPath)),
    }),
    advisoryLocks: true,
    poolSize: POSTGRES_POOL_SIZE,
    reserveSession: () => reserveSession(pool),
    async close() {},
  };
}
