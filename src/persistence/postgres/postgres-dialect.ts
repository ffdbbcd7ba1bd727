/** PostgreSQL through a `pg` pool, under Kysely's PostgresDialect. */
import type { StoreDialect } from '../kysely/store-dialect.js';
import { lossReportingPool, reserveSession, watchConnectionLoss } from './postgres-connection-loss.js';

/** Connections per store (pg's own default). */
export const POSTGRES_POOL_SIZE = 10;

/** A dialect for the server at `databaseUrl` (`postgres://user@host:5432/db`). */
export async function createPostgresDialect(databaseUrl: string): Promise<StoreDialect> {
  // Loaded here, not at import time: importing memfold must not pay for a backend it may not use.
  const [{ PostgresDialect }, { default: pg }] = await Promise.all([import('kysely'), import('pg')]);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POSTGRES_POOL_SIZE });
  // A lost connection, idle or checked out, fails the operation in flight and never the process.
  watchConnectionLoss(pool);
  return {
    backend: 'postgres',
    dialect: new PostgresDialect({ pool: lossReportingPool(pool) }),
    advisoryLocks: true,
    poolSize: POSTGRES_POOL_SIZE,
    reserveSession: () => reserveSession(pool),
    async close() {},
  };
}
