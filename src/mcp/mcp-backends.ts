/**
 * What an MCP server's tools reach. `memfoldBackend` serves from an open memfold (the process that owns the
 * stores, or a server that opened them itself). `openArchiveBackend` opens the LanceDB archive alone, without the
 * live store: on the embedded default the agent's process holds PGlite, and LanceDB takes concurrent readers, so
 * a read-only server beside the agent answers memory_read from what the agent archived (read consistency 0: each
 * read sees the latest commit). On PostgreSQL it first checks, reading only, that the archive is the live store's.
 */
import type { Archive } from '../archive/archive.js';
import type { RuntimeConfig } from '../config.js';
import { isSemanticEmbedder } from '../embedding/embedder.js';
import type { Memfold } from '../memfold.js';
import { createTokenCounter } from '../tokens/create-token-counter.js';
import { createMemoryReadTool } from '../tools/memory-read.js';
import type { McpAccess, McpBackend } from './mcp-tools.js';

/** The tools of an open memfold; `compact` only with write access. */
export function memfoldBackend(memfold: Pick<Memfold, 'memoryRead' | 'context' | 'compactTool'>, access: McpAccess): McpBackend {
  return {
    memoryRead: (id) => memfold.memoryRead(id),
    ...(access !== 'archive' ? { context: (id: string) => memfold.context(id) } : {}),
    ...(access === 'write' ? { compactTool: (id: string) => memfold.compactTool(id) } : {}),
  };
}

export interface ArchiveBackend extends McpBackend {
  close(): Promise<void>;
}

/** memory_read over the configured LanceDB archive alone (no PGlite, no lock). */
export async function openArchiveBackend(config: RuntimeConfig): Promise<ArchiveBackend> {
  // The configured adapters' factories (and Node's file system modules) load here, not with memfold's import.
  const { archiveBindingCheck, buildEmbedder, openCheckedArchive, openPersistence, remoteCallQueue } = await import('../configured-adapters.js');
  // On PostgreSQL (shared, no lock) the archive is checked against the live store's record, reading only: a server on
  // another archive would answer "nothing found" for everything. PGlite's home holds its own archive, and its lock the agent's.
  const check = async () => {
    if (config.databaseUrl === undefined) return;
    const persistence = await openPersistence(config, false);
    try {
      await archiveBindingCheck(config, persistence, { write: false, adopt: false })();
    } finally {
      await persistence.close();
    }
  };
  // Read-only: no index upkeep, no table made; the agent's process is the archive's writer.
  const embedder = buildEmbedder(config, remoteCallQueue(config));
  const archive: Archive = await openCheckedArchive(config, embedder, () => undefined, check, { readOnly: true });
  const tokens = createTokenCounter(config.assistantModel ? { model: config.assistantModel } : {});
  // A semantic embedder ranks candidate messages by meaning too, as the agent's own memory_read does (`memfold-tools.ts`).
  const semantic = isSemanticEmbedder(embedder) ? { embedder } : {};
  return {
    memoryRead: (id) => createMemoryReadTool(archive, id, { countTokens: (text) => tokens.count(text), ...semantic }),
    close: () => archive.close(),
  };
}
