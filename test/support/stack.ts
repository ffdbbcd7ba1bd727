/**
 * A whole memfold on real components for integration tests: a persistence backend (PGlite copy or
 * a fresh PostgreSQL database), LanceDB in a temp folder, the extractive summarizer, the hashing
 * embedder, chars/4 tokens (so budgets are predictable).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CompactionSettings } from '../../src/compaction/compaction-settings.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold, type Memfold, type MemfoldOptions } from '../../src/memfold.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import type { TestBackend } from './backends.js';

export interface Stack {
  memfold: Memfold;
  /** The real LanceDB archive (also reachable as memfold.memory unless a wrapper was given). */
  archive: Archive;
  lanceDir: string;
  /** Run raw SQL on the test database (to provoke real database failures). */
  exec(statement: string): Promise<void>;
  close(): Promise<void>;
}

export async function openStack(
  backend: TestBackend,
  options: { compaction?: Partial<CompactionSettings>; wrapMemory?: (memory: Archive) => Archive } & Omit<
    MemfoldOptions,
    'persistence' | 'memory' | 'compaction'
  > = {},
): Promise<Stack> {
  const { persistence, cleanup, exec } = await backend.open();
  const lanceDir = await mkdtemp(path.join(os.tmpdir(), 'memfold-lance-'));
  const archive = await openLanceArchive({ uri: lanceDir, embedder: createHashingEmbedder() });
  const { wrapMemory, ...rest } = options;
  const memfold = await createMemfold({
    env: {},
    tokens: createTokenCounter({ mode: 'chars4' }),
    ...rest,
    persistence,
    archive: wrapMemory ? wrapMemory(archive) : archive,
  });
  return {
    memfold,
    archive,
    lanceDir,
    exec,
    async close() {
      await memfold.close();
      await archive.close();
      await cleanup();
      await rm(lanceDir, { recursive: true, force: true });
    },
  };
}

/** A Archive that delegates to a real one, with faults switched on by the test. */
export function withFaults(
  memory: Archive,
  faults: { failWrite?: boolean; corruptRead?: boolean; failWriteAfterStoring?: boolean; failUndo?: boolean },
): Archive {
  const undoFault = () => {
    if (faults.failUndo) throw new Error('injected failure of an undo');
  };
  return {
    write: async (entries) => {
      if (faults.failWrite) throw new Error('injected archive write failure');
      await memory.write(entries);
      if (faults.failWriteAfterStoring) throw new Error('injected failure after the rows were stored');
    },
    read: async (conversationId, labels) => {
      const rows = await memory.read(conversationId, labels);
      return faults.corruptRead ? rows.map((r) => ({ ...r, content: `${r.content} (corrupted)` })) : rows;
    },
    // The read-back's own query, corrupted alike (an archive without it is read back through `read`).
    ...(memory.readDigests
      ? {
          readDigests: async (conversationId: string, labels: string[]) => {
            const digests = await memory.readDigests!(conversationId, labels);
            return faults.corruptRead ? digests.map((d) => ({ ...d, content: `${d.content} (corrupted)` })) : digests;
          },
        }
      : {}),
    search: (q) => memory.search(q),
    list: (o) => memory.list(o),
    mark: async (c, l, p) => {
      if (p === null) undoFault();
      await memory.mark(c, l, p);
    },
    markEach: async (c, marks) => {
      if (marks.some((m) => m.parentLabel === null)) undoFault();
      await memory.markEach(c, marks);
    },
    delete: async (c, l) => {
      undoFault();
      await memory.delete(c, l);
    },
    close: async () => undefined,
  };
}
