/**
 * The store's archive binding (`archive_binding`, migration 012): one row naming the archive every process sharing
 * this store must use. Binding runs under a transaction-scoped advisory lock, so processes opening a new store at once
 * decide one after the other: the first records its archive (and gives it its id), the next find both in place.
 */
import { sql, type Kysely } from 'kysely';
import { requireText } from '../../conversation/text.js';
import { guard, toPersistenceError } from '../persistence-error.js';
import type { ArchiveBinding, ArchiveBindingDecision } from '../persistence-provider.js';
import type { Database } from './kysely-schema.js';

/** Serializes binders of one database (another key than the migrations'). */
const BINDING_LOCK_KEY = '7311240811940281598';

export function getArchiveBinding(db: Kysely<Database>): Promise<ArchiveBinding | undefined> {
  return guard('read the archive binding', () => readBinding(db));
}

export async function bindArchive(db: Kysely<Database>, decide: ArchiveBindingDecision): Promise<ArchiveBinding | undefined> {
  if (typeof decide !== 'function') throw toPersistenceError(new TypeError('decide must be a function'), 'bind the archive');
  try {
    return await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${BINDING_LOCK_KEY}::bigint)`.execute(trx);
      const bound = await readBinding(trx);
      const next = await decide(bound);
      if (next === undefined) return bound;
      const location = requireText(next.location, 'binding.location');
      const archiveId = requireText(next.archiveId, 'binding.archiveId');
      await sql`insert into archive_binding (location, archive_id) values (${location}, ${archiveId})
                on conflict (singleton) do update set location = excluded.location, archive_id = excluded.archive_id, bound_at = now()`.execute(trx);
      return readBinding(trx);
    });
  } catch (error) {
    // `decide`'s own refusals (MemfoldErrors) come back as thrown.
    throw toPersistenceError(error, 'bind the archive');
  }
}

async function readBinding(db: Kysely<Database>): Promise<ArchiveBinding | undefined> {
  const row = await db.selectFrom('archive_binding').select(['location', 'archive_id', 'bound_at']).executeTakeFirst();
  return row && { location: row.location, archiveId: row.archive_id, boundAt: new Date(row.bound_at) };
}
