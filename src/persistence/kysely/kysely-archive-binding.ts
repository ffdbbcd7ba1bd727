/**
 * The store's archive binding (`archive_binding`, migration 012): one row naming the archive every process sharing
 * this store must use. Written once, atomically (`on conflict do nothing`, then read back), so of two processes
 * binding at once both see the same winner; replaced only on an operator's request.
 */
import { sql, type Kysely } from 'kysely';
import { requireText } from '../../conversation/text.js';
import { guard } from '../persistence-error.js';
import type { ArchiveBinding } from '../persistence-provider.js';
import type { Database } from './kysely-schema.js';

export function getArchiveBinding(db: Kysely<Database>): Promise<ArchiveBinding | undefined> {
  return guard('read the archive binding', async () => {
    const row = await db.selectFrom('archive_binding').select(['location', 'archive_id', 'bound_at']).executeTakeFirst();
    return row && { location: row.location, archiveId: row.archive_id, boundAt: new Date(row.bound_at) };
  });
}

export async function bindArchive(
  db: Kysely<Database>,
  binding: { location: string; archiveId: string },
  options: { replace?: boolean } = {},
): Promise<ArchiveBinding> {
  const location = requireText(binding?.location, 'binding.location');
  const archiveId = requireText(binding?.archiveId, 'binding.archiveId');
  await guard('record the archive binding', () =>
    options.replace === true
      ? sql`insert into archive_binding (location, archive_id) values (${location}, ${archiveId})
            on conflict (singleton) do update set location = excluded.location, archive_id = excluded.archive_id, bound_at = now()`.execute(db)
      : sql`insert into archive_binding (location, archive_id) values (${location}, ${archiveId}) on conflict (singleton) do nothing`.execute(db),
  );
  return (await getArchiveBinding(db))!;
}
