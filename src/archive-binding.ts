/**
 * One live store has one archive. The first process that opens a store with its archive records the archive in the
 * store (its location and the id the archive keeps inside itself); every later open compares the id of the archive it
 * brings and is refused on another one, before anything is read or written. Two processes sharing a PostgreSQL
 * database but archiving to their own `./.memfold/lancedb` would otherwise split memory silently: clip-archives
 * pointing at batches the other cannot open, memory_read finding nothing.
 */
import { randomUUID } from 'node:crypto';
import { MemfoldError } from './errors.js';
import type { ArchiveBinding, PersistenceProvider } from './persistence/persistence-provider.js';

export interface ArchiveBindingCheck {
  persistence: PersistenceProvider;
  /** The archive as this process reaches it: an absolute folder, or the object-store URI. */
  location: string;
  /** The archive's id; `assign` gives it that one when it has none. Undefined: none, and none assigned. */
  identity: (assign?: string) => Promise<string | undefined>;
  /** Whether this open may write (false for read-only commands: nothing is recorded, the check still runs). */
  write: boolean;
  /** Record this archive as the store's, replacing what was recorded: for an operator who moved the archive. */
  adopt: boolean;
}

/** The setting that says where the archive is, as error messages name it. */
const ARCHIVE_SETTING = 'LANCEDB_URI (config.lancedbUri)';

/** Check (and on the first open, record) that the live store belongs to this archive; `archive_mismatch` when not. */
export async function checkArchiveBinding(check: ArchiveBindingCheck): Promise<void> {
  const { persistence, location } = check;
  if (persistence.getArchiveBinding === undefined || persistence.bindArchive === undefined) return;
  // The common case, every open after the first: the archive is the recorded one. No lock taken.
  const bound = await persistence.getArchiveBinding();
  if (bound !== undefined && !check.adopt) return requireSame(bound, location, await check.identity());
  if (!check.write) return;
  // Binding (or adopting): one process of the store at a time, so processes opening a new store at once agree.
  await persistence.bindArchive(async (current) => {
    const found = await check.identity();
    if (current !== undefined && !check.adopt) {
      requireSame(current, location, found);
      return undefined;
    }
    return { location, archiveId: found ?? (await check.identity(randomUUID()))! };
  });
}

function requireSame(bound: ArchiveBinding, location: string, found: string | undefined): void {
  if (found === bound.archiveId) return;
  throw archiveMismatch(bound, location, found === undefined ? 'an archive without its identity (new, emptied or never used)' : 'another archive');
}

function archiveMismatch(bound: ArchiveBinding, location: string, what: string): MemfoldError {
  const place = location === bound.location ? 'the same location, but it is' : '';
  return new MemfoldError(
    'archive_mismatch',
    `The live store's archive is at ${bound.location} (recorded ${bound.boundAt.toISOString()}), but this process opened ` +
      `${location}: ${place ? `${place} ${what}` : what}. Every process sharing the live store must use the one archive, or memory ` +
      `is split between them. Set ${ARCHIVE_SETTING} to ${bound.location} (on another machine, the same folder shared, or ` +
      `an s3:// archive). If the archive was moved to ${location}, adopt it once: \`memfold reconcile --adopt-archive\` ` +
      '(or createMemfold({ adoptArchive: true })).',
    { details: { recordedLocation: bound.location, location, archiveId: bound.archiveId, setting: 'LANCEDB_URI' } },
  );
}
