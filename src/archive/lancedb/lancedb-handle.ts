/**
 * The open archive table and what every call goes through: the closed check, reads tracked so `close` waits for them,
 * mutations serialized in the table's write queue with commit conflicts retried, reads scoped (every row checked
 * against namespace and conversation), and the columns a table made before lacks (`lancedb-optional-columns.ts`).
 */
import type { Query, Table, VectorQuery } from '@lancedb/lancedb';
import PQueue from 'p-queue';
import type { ArchiveEntry } from '../../conversation/types.js';
import type { Embedder } from '../../embedding/embedder.js';
import { errorMessage, MemfoldError } from '../../errors.js';
import { requireLabels } from '../archive-entry-checks.js';
import type { EntryDigest } from '../entry-digest.js';
import { readRowDigests } from './lancedb-digests.js';
import { readGroups } from './lancedb-read-group.js';
import { chunked, labelsWhere, requireConversationId } from './lancedb-filter.js';
import { COLUMN, fromRow, rowKeyPrefix } from './lancedb-schema.js';
import { optionalColumnsOf, type OptionalColumns } from './lancedb-optional-columns.js';
import type { Upkeep } from './lancedb-upkeep.js';
import { enqueueWrite, isCommitConflict } from './lancedb-writes.js';

export function wrap(operation: string, error: unknown): MemfoldError {
  if (MemfoldError.isInstance(error)) return error;
  return new MemfoldError('archive_error', `LanceDB archive ${operation} failed: ${errorMessage(error)}`, {
    cause: error,
    retryable: isCommitConflict(error),
  });
}

export interface ScopedRowsInput {
  operation: string;
  conversationId: string;
  /** Must start with the conversation's scope (`lancedb-filter.ts`). */
  where: string;
  /** Turns the plain query into a full-text or vector query (returning the query to run). */
  build?: (query: Query) => Query | VectorQuery;
  /** The score column a search names. */
  score?: '_score' | '_distance';
  /**
   * Only these columns (those the table has). Without the scope's own columns the key is read in their place (it
   * holds namespace and conversation: `rowKeyPrefix`), and each row is checked by it.
   */
  pick?: readonly string[];
}

export interface LanceHandle {
  table: Table;
  namespace: string;
  embedder: Embedder;
  tableKey: string;
  warn: (message: string, error: unknown) => void;
  upkeep: Upkeep;
  /** True once `close` began: new reads and writes are refused, upkeep is left to the next open. */
  isClosed(): boolean;
  startClosing(): void;
  ensureOpen(): void;
  /** Native reads running now: `close` waits for them (LanceDB refuses to close a table in use). */
  reads: Set<Promise<unknown>>;
  /** Serialize a mutation on this table, retry its commit conflicts, wrap its errors. */
  mutate(operation: string, task: () => Promise<void>): Promise<void>;
  /** Rows of one conversation matching `where`, every one checked against the scope. */
  rows(input: ScopedRowsInput): Promise<Record<string, unknown>[]>;
  /** How many rows match `where` (which starts with the scope), none read. */
  count(where: string): Promise<number>;
  /** Adds the columns a table made before lacks (inside the write chain; another process may add them first). */
  ensureColumns(): Promise<void>;
  /** The table's columns in order, as writes lay them out: fixed once every optional column exists. */
  columnsForWrite(): ReturnType<Table['schema']>;
  read(conversationId: string, labels: unknown): Promise<ArchiveEntry[]>;
  /** The stored entries with these labels as digests (`../entry-digest.ts`), hashed by LanceDB's engine. */
  readDigests(conversationId: string, labels: unknown): Promise<EntryDigest[]>;
}

export interface HandleInput {
  table: Table;
  namespace: string;
  embedder: Embedder;
  tableKey: string;
  retry: <T>(operation: () => Promise<T>) => Promise<T>;
  warn: (message: string, error: unknown) => void;
  /** The table's index upkeep, told whether the archive is closing. */
  upkeep: (closing: () => boolean) => Upkeep;
}

export async function createLanceHandle(input: HandleInput): Promise<LanceHandle> {
  const { table, namespace, retry } = input;
  const columns = await optionalColumnsOf(table);
  let closed = false;
  const handle: LanceHandle = {
    table,
    namespace,
    embedder: input.embedder,
    tableKey: input.tableKey,
    warn: input.warn,
    upkeep: input.upkeep(() => closed),
    isClosed: () => closed,
    startClosing() {
      closed = true;
    },
    reads: new Set(),
    ensureOpen() {
      if (closed) throw new MemfoldError('archive_error', 'LanceDB archive is closed');
    },
    mutate(operation, task) {
      // A write that reaches the queue once the archive is closing is refused: `close` waits only for those queued before.
      handle.ensureOpen();
      return enqueueWrite(handle.tableKey, async () => {
        try {
          await retry(task);
        } catch (error) {
          throw wrap(operation, error);
        }
      });
    },
    rows: (rowsInput) => scopedRows(handle, columns.selected, rowsInput),
    async count(where) {
      try {
        return await reading(handle, () => table.countRows(where));
      } catch (error) {
        throw wrap('count', error);
      }
    },
    ensureColumns: columns.ensure,
    columnsForWrite: columns.forWrite,
    read: (conversationId, labels) => readEntries(handle, conversationId, labels),
    readDigests: (conversationId, labels) => readDigests({ group: digestGroup, conversationId, labels }),
  };
  // Read-backs asked while one runs share the next query (those of concurrent compactions, whose writes share a commit).
  const digestGroup = readGroups((asks: readonly DigestAsk[]) => readDigestGroup(handle, columns, asks));
  return handle;
}

/** A native read, tracked so `close` waits for it; refused once the archive is closing, like any call after `close`. */
function reading<T>(handle: LanceHandle, start: () => Promise<T>): Promise<T> {
  handle.ensureOpen();
  const work = start();
  handle.reads.add(work);
  void work.finally(() => handle.reads.delete(work)).catch(() => undefined);
  return work;
}

/**
 * Rows of one conversation matching `where`; `build` turns the plain query into a full-text or vector query. Every
 * row is checked against the scope too, so a row of another scope can never come back, even if a where-clause were wrong.
 */
async function scopedRows(handle: LanceHandle, selected: () => Promise<string[]>, input: ScopedRowsInput): Promise<Record<string, unknown>[]> {
  const { operation, conversationId, where, build, score, pick } = input;
  const { namespace } = handle;
  const byKey = pick !== undefined && !(pick.includes(COLUMN.namespace) && pick.includes(COLUMN.conversationId));
  let found: Record<string, unknown>[];
  try {
    // A search names its score column: LanceDB otherwise adds it itself and logs a deprecation warning
    // on stderr for every query (the projection will stop adding it).
    found = await reading(handle, async () => {
      const all = await selected();
      const columns = pick ? all.filter((name) => pick.includes(name) || (byKey && name === COLUMN.key)) : all;
      const plain = handle.table
        .query()
        .where(where)
        .select(score ? [...columns, score] : columns);
      const query = build ? build(plain) : plain;
      return (await query.toArray()) as Record<string, unknown>[];
    });
  } catch (error) {
    throw wrap(operation, error);
  }
  const prefix = rowKeyPrefix(namespace, conversationId);
  const outside = byKey
    ? (row: Record<string, unknown>) => typeof row[COLUMN.key] !== 'string' || !(row[COLUMN.key] as string).startsWith(prefix)
    : (row: Record<string, unknown>) => row[COLUMN.namespace] !== namespace || row[COLUMN.conversationId] !== conversationId;
  if (found.some(outside)) {
    throw new MemfoldError(
      'archive_error',
      `LanceDB archive ${operation} returned rows outside namespace and conversation ${JSON.stringify([namespace, conversationId])}`,
    );
  }
  return found;
}

async function readEntries(handle: LanceHandle, conversationId: string, labels: unknown): Promise<ArchiveEntry[]> {
  handle.ensureOpen();
  requireConversationId(conversationId);
  const wanted = requireLabels(labels);
  const found = new Map<string, ArchiveEntry>();
  for (const slice of chunked([...new Set(wanted)])) {
    for (const row of await handle.rows({ operation: 'read', conversationId, where: labelsWhere(handle.namespace, conversationId, slice) })) {
      const entry = fromRow(row);
      found.set(entry.label, entry);
    }
  }
  return wanted.flatMap((label) => {
    const entry = found.get(label);
    return entry ? [entry] : [];
  });
}

interface DigestAsk {
  conversationId: string;
  labels: string[];
}

interface DigestsInput {
  group: (ask: DigestAsk) => Promise<Map<string, EntryDigest>>;
  conversationId: string;
  labels: unknown;
}

async function readDigests({ group, conversationId, labels }: DigestsInput): Promise<EntryDigest[]> {
  requireConversationId(conversationId);
  const wanted = requireLabels(labels);
  const found = await group({ conversationId, labels: [...new Set(wanted)] });
  return wanted.flatMap((label) => found.get(label) ?? []);
}

/**
 * Digest queries of one group that run at once. LanceDB answers each on its own threads, and a query spends much of
 * its time in single-threaded steps: three at once read back a write of 9,352 labels in 298 ms instead of 444.
 */
const DIGEST_QUERIES_AT_ONCE = 3;

/** The digests of every ask's labels, by ask, in one query per 500 labels whichever conversations they name. */
async function readDigestGroup(handle: LanceHandle, columns: OptionalColumns, asks: readonly DigestAsk[]): Promise<Map<string, EntryDigest>[]> {
  handle.ensureOpen();
  const { table, namespace } = handle;
  const found = asks.map(() => new Map<string, EntryDigest>());
  const readSlice = async (slice: ReadonlyArray<{ conversationId: string; label: string }>) => {
    const byConversation = new Map<string, string[]>();
    for (const { conversationId, label } of slice) {
      const labels = byConversation.get(conversationId);
      if (labels) labels.push(label);
      else byConversation.set(conversationId, [label]);
    }
    const where = [...byConversation].map(([conversationId, labels]) => `(${labelsWhere(namespace, conversationId, labels)})`).join(' OR ');
    const rows = await reading(handle, async () => {
      await columns.selected(); // learns which optional columns exist yet
      return readRowDigests({ table, where, namespace, conversationIds: new Set(byConversation.keys()), columns: columns.present() });
    });
    for (const { conversationId, digest } of rows) {
      asks.forEach((ask, i) => {
        if (ask.conversationId === conversationId) found[i]!.set(digest.label, digest);
      });
    }
  };
  const slices = chunked(asks.flatMap((ask) => ask.labels.map((label) => ({ conversationId: ask.conversationId, label }))));
  const queries = new PQueue({ concurrency: DIGEST_QUERIES_AT_ONCE });
  try {
    await Promise.all(slices.map((slice) => queries.add(() => readSlice(slice))));
  } catch (error) {
    queries.clear(); // a failed query fails the group: its slices not yet started are dropped
    throw wrap('read-back', error);
  }
  return found;
}
