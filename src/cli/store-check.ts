/**
 * Read-only commands must find a store where they are pointed, never make one: a mistyped `--home` would otherwise
 * get an empty database (PGlite's `initdb`, seconds) or an empty archive, and every answer would be "nothing found".
 * Checked before anything opens; the refusal names the path and exits 2 like any bad argument.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { isObjectStoreUri } from '../archive/lancedb/lancedb-storage-options.js';
import type { RuntimeConfig } from '../config.js';
import { InvalidArgumentError } from '../errors.js';

/** The store a command reads: the live store (PGlite on the embedded default), or the LanceDB archive alone. */
export type StoreNeed = 'live' | 'archive';

/** PG_VERSION is the first file an initialized PGlite data directory holds; a bare folder is not a store. */
function pgliteStoreAt(home: string): boolean {
  return existsSync(path.join(home, 'pg', 'PG_VERSION'));
}

function isFolder(location: string): boolean {
  try {
    return statSync(location).isDirectory();
  } catch {
    return false;
  }
}

/** Throws InvalidArgumentError naming `--home` (the flag or MEMFOLD_HOME) when the store the command reads is not there. */
export function requireStore(config: Pick<RuntimeConfig, 'home' | 'databaseUrl' | 'lancedbUri'>, need: StoreNeed): void {
  const fix = '(set --home or MEMFOLD_HOME to an existing one)';
  if (need === 'live') {
    // PostgreSQL: the server is there; an uninitialized database is refused on open, naming `memfold migrate`.
    if (config.databaseUrl !== undefined || pgliteStoreAt(config.home)) return;
    throw new InvalidArgumentError('--home', `no store at ${path.join(config.home, 'pg')} yet: import or append messages first ${fix}`);
  }
  // The archive alone: an object store cannot be looked at cheaply; a folder must exist, or the home must hold a
  // live store whose archive has nothing in it yet.
  if (isObjectStoreUri(config.lancedbUri) || isFolder(config.lancedbUri)) return;
  if (config.databaseUrl === undefined && pgliteStoreAt(config.home)) return;
  throw new InvalidArgumentError('--home', `no archive at ${config.lancedbUri} (and no store in ${config.home}) ${fix}`);
}
