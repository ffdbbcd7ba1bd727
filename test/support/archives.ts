/**
 * The archive backends the Archive contract suites run against:
 *   for (const backend of archiveBackends()) describe(`${backend.name}: ...`, ...)
 * - lancedb: a LanceDB table in a temp folder;
 * - memory: `createInMemoryArchive` on a fresh state.
 * A "table" is where several archives meet (namespaces in one table, a table opened again after close):
 * the folder for LanceDB, one shared state in memory.
 * MEMFOLD_TEST_BACKENDS filters: `memory` selects the in-memory archive, and any database backend
 * (pglite, postgres) the LanceDB one; unset runs both.
 */
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import type { Embedder } from '../../src/embedding/embedder.js';
import { createInMemoryArchive, createInMemoryArchiveState } from '../../src/archive/in-memory/in-memory-archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { tempFolder } from '../archive/archive-fixtures.js';

export type ArchiveBackendName = 'lancedb' | 'memory';

export interface ArchiveOpenOptions {
  namespace?: string;
  /** Default the hashing embedder. */
  embedder?: Embedder;
  /** Default the archive's own (full text alone with the hashing embedder). */
  fusionWeights?: { fullText: number; vector: number };
  onWarning?: (message: string, error: unknown) => void;
}

export interface ArchiveTable {
  /** An archive on this table; the caller closes it. */
  open(options?: ArchiveOpenOptions): Promise<Archive>;
  /** Removes the table (the folder); archives on it must be closed first. */
  cleanup(): Promise<void>;
}

export interface ArchiveBackend {
  name: ArchiveBackendName;
  table(): Promise<ArchiveTable>;
}

export function archiveBackends(): ArchiveBackend[] {
  const raw = (process.env.MEMFOLD_TEST_BACKENDS ?? '').trim();
  const names = raw === '' ? undefined : raw.split(',').map((name) => name.trim());
  const backends: ArchiveBackend[] = [];
  if (names === undefined || names.some((name) => name === 'pglite' || name === 'postgres')) backends.push({ name: 'lancedb', table: lanceTable });
  if (names === undefined || names.includes('memory')) backends.push({ name: 'memory', table: memoryTable });
  return backends;
}

async function lanceTable(): Promise<ArchiveTable> {
  const folder = await tempFolder('archive');
  return {
    open: ({ embedder = createHashingEmbedder(), ...rest } = {}) => openLanceArchive({ uri: folder.dir, embedder, ...rest }),
    cleanup: folder.cleanup,
  };
}

async function memoryTable(): Promise<ArchiveTable> {
  const state = createInMemoryArchiveState();
  return {
    open: async ({ embedder = createHashingEmbedder(), ...rest } = {}) => createInMemoryArchive({ state, embedder, ...rest }),
    cleanup: async () => undefined,
  };
}
