/** Statements that must commit together, whether the caller holds a pool handle or a transaction already. */
import type { Kysely } from 'kysely';
import type { Database } from './kysely-schema.js';

/** Run `fn` in a transaction, or directly when `db` already is one. */
export function inTransaction<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}
