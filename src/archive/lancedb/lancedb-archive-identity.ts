/**
 * The identity of a LanceDB archive: a random id kept inside the archive itself, in a one-row table
 * (`memfold_archive_identity`) beside the entries table. The live store records it (`bindArchive`), so the same
 * archive reached through another path (a symlink, another mount, another host's folder on shared storage) is
 * recognised, and another archive at the same path (a new, emptied or replaced folder) is not.
 */
import { connect, type Connection } from '@lancedb/lancedb';
import { errorMessage, MemfoldError } from '../../errors.js';
import { ARCHIVE_IDENTITY_TABLE } from '../archive-identity-table.js';

export { ARCHIVE_IDENTITY_TABLE };

export interface ArchiveIdentityOptions {
  /** Folder or object-store URI of the archive. */
  uri: string;
  storageOptions?: Record<string, string>;
  /**
   * Give the archive this id when it has none yet (the first writer's open). Default: only read it. The caller
   * chooses it (and serializes callers, `bindArchive`): concurrent creates of the marker are not atomic, but
   * creates of one id leave that id whichever wins.
   */
  assign?: string;
}

/** The archive's id (after assigning `assign` when it had none); undefined when it has none and none is assigned. */
export async function archiveIdentity(options: ArchiveIdentityOptions): Promise<string | undefined> {
  let db: Connection | undefined;
  try {
    db = await connect(options.uri, options.storageOptions ? { storageOptions: options.storageOptions } : {});
    const found = await readIdentity(db);
    if (found !== undefined || options.assign === undefined) return found;
    try {
      await db.createTable(ARCHIVE_IDENTITY_TABLE, [{ archive_id: options.assign, created_at: new Date().toISOString() }], { mode: 'create' });
    } catch (error) {
      // Another process gave it an id first: that one is the archive's.
      if (!/already exists/i.test(errorMessage(error))) throw error;
    }
    const id = await readIdentity(db);
    if (id === undefined) throw new Error(`its ${ARCHIVE_IDENTITY_TABLE} table holds no id`);
    return id;
  } catch (error) {
    throw new MemfoldError('archive_error', `LanceDB archive identity at ${options.uri} could not be read: ${errorMessage(error)}`, { cause: error });
  } finally {
    db?.close();
  }
}

async function readIdentity(db: Connection): Promise<string | undefined> {
  let table: Awaited<ReturnType<Connection['openTable']>>;
  try {
    table = await db.openTable(ARCHIVE_IDENTITY_TABLE);
  } catch (error) {
    if (/not found|does not exist/i.test(errorMessage(error))) return undefined;
    throw error;
  }
  try {
    const rows = await table.query().select(['archive_id']).limit(1).toArray();
    const id = rows[0]?.archive_id;
    return typeof id === 'string' && id !== '' ? id : undefined;
  } finally {
    table.close();
  }
}
