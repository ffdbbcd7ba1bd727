/**
 * The adapters whose backends are heavy to load (LanceDB with Arrow; Kysely with PGlite or pg), behind
 * functions of the same signature that import them on first call. Importing memfold then costs only
 * what every use needs; a program that opens no store, or only the in-memory one, never loads them.
 */
import type { LanceArchiveOptions } from './archive/lancedb/lancedb-archive.js';
import type { ArchiveIdentityOptions } from './archive/lancedb/lancedb-archive-identity.js';
import type { Archive } from './archive/archive.js';
import type { KyselyPersistenceOptions } from './persistence/kysely/kysely-store.js';
import type { PersistenceProvider } from './persistence/persistence-provider.js';

/** The LanceDB archive (see `archive/lancedb/lancedb-archive.ts`), loading LanceDB on the first call. */
export async function openLanceArchive(options: LanceArchiveOptions): Promise<Archive> {
  const lance = await import('./archive/lancedb/lancedb-archive.js');
  return lance.openLanceArchive(options);
}

/** The id a LanceDB archive keeps inside itself (see `archive/lancedb/lancedb-archive-identity.ts`), loading LanceDB on the first call. */
export async function lanceArchiveIdentity(options: ArchiveIdentityOptions): Promise<string | undefined> {
  const identity = await import('./archive/lancedb/lancedb-archive-identity.js');
  return identity.archiveIdentity(options);
}

/** The Kysely store on PGlite or PostgreSQL (see `persistence/kysely/kysely-store.ts`), loading Kysely and the backend on the first call. */
export async function createKyselyPersistence(options: KyselyPersistenceOptions): Promise<PersistenceProvider> {
  const kysely = await import('./persistence/kysely/kysely-store.js');
  return kysely.createKyselyPersistence(options);
}
