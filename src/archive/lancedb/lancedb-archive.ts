/**
 * The LanceDB adapter of the Archive port: one table of ArchiveEntry rows (summaries and transcripts),
 * scoped by namespace and conversation, searched by full text (BM25) and vectors fused by weighted RRF.
 * Opening is here; each call goes through the table handle (`lancedb-handle.ts`), writes in `lancedb-write.ts`,
 * search in `lancedb-search.ts`, index upkeep in `lancedb-upkeep.ts`.
 */
import { connect, type Connection, type Table } from '@lancedb/lancedb';
import type { Embedder } from '../../embedding/embedder.js';
import { errorMessage } from '../../errors.js';
import type { Archive, ArchiveErasure, ListOptions } from '../archive.js';
import { requireLabels, requireMarks, requireParentLabel } from '../archive-entry-checks.js';
import { deferTableCreation } from './lancedb-deferred-archive.js';
import { chunked, filterWhere, labelsWhere, requireConversationId, scopeWhere } from './lancedb-filter.js';
import { createLanceHandle, wrap, type LanceHandle } from './lancedb-handle.js';
import { ARCHIVE_INDEXES } from './lancedb-indexes.js';
import { checkLanceOptions, type LanceArchiveOptions, type LanceSettings } from './lancedb-options.js';
import { purgeRows } from './lancedb-purge.js';
import { readOnlyArchive } from '../read-only-archive.js';
import { archiveSchema, checkSchema, COLUMN, compareEntriesByTime, embedderForTable, fromRow, parentsTable, rowKey } from './lancedb-schema.js';
import { searchEntries } from './lancedb-search.js';
import { createUpkeep } from './lancedb-upkeep.js';
import { writeEntries } from './lancedb-write.js';
import { withConflictRetry, writesSettled } from './lancedb-writes.js';

export { DEFAULT_LANCE_ARCHIVE_OPTIONS, type LanceArchiveOptions } from './lancedb-options.js';

const sleepWithTimer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `markEach` with more distinct parents than this merges instead of updating once per parent. */
const MARK_UPDATES_AT_MOST = 3;

/** Open (creating when missing) the archive table at `uri` and return the Archive over it. */
export async function openLanceArchive(options: LanceArchiveOptions): Promise<Archive> {
  const { settings, weights } = checkLanceOptions(options);
  const opened = await openTable(options, settings);
  if ('deferred' in opened) return opened.deferred;
  const { db, table, dimensions } = opened;
  const sleep = options.sleep ?? sleepWithTimer;
  const retry = <T>(operation: () => Promise<T>) =>
    withConflictRetry(operation, { retries: settings.commitRetries, baseDelayMs: settings.commitRetryBaseDelayMs, sleep });
  const warn = options.onWarning ?? (() => undefined);
  const tableKey = `${options.uri}\u0000${settings.tableName}`;
  const embedder = options.embedder.dimensions === dimensions ? options.embedder : embedderForTable(options.embedder, dimensions, settings.tableName);
  const handle = await createLanceHandle({
    table,
    namespace: settings.namespace,
    embedder,
    tableKey,
    retry,
    warn,
    upkeep: (closing) =>
      createUpkeep({
        table,
        tableKey,
        delayMs: settings.upkeepDelayMs,
        optimizeAfterUnindexedRows: settings.optimizeAfterUnindexedRows,
        scalarIndexes: settings.scalarIndexes,
        retry,
        warn,
        closing,
      }),
  });
  // A reader leaves upkeep to the archive's writer: creating indexes or optimizing commits a new table version.
  if (options.readOnly !== true) await handle.upkeep.maintain();
  const archive = archiveOver({ handle, db, weights, limits: settings });
  // Without the scalar indexes a count scans the table as a search's filter does: the capability is left out.
  if (!settings.scalarIndexes) delete archive.count;
  return guarded(options, archive);
}

/** The archive as given, or, opened `readOnly`, refusing every call that would change it (`read-only-archive.ts`). */
function guarded(options: LanceArchiveOptions, archive: Archive): Archive {
  return options.readOnly === true ? readOnlyArchive(archive, `LanceDB archive ${options.uri}`) : archive;
}

type Opened = { db: Connection; table: Table; dimensions: number } | { deferred: Archive };

/** Connect and open the table, creating it when missing; deferred when the embedder learns its size from its first answer. */
async function openTable(options: LanceArchiveOptions, settings: LanceSettings): Promise<Opened> {
  const { tableName } = settings;
  let connection: Connection | undefined;
  try {
    connection = await connect(options.uri, {
      readConsistencyInterval: settings.readConsistencySeconds,
      ...(options.storageOptions ? { storageOptions: options.storageOptions } : {}),
    });
    const db = connection;
    const existing = await openExisting(db, tableName);
    // Read-only, a missing table is not created here: it finds nothing until another process creates it.
    if (existing === undefined && (options.embedder.dimensions === 0 || options.readOnly === true)) {
      return { deferred: guarded(options, deferredArchive(options, db, tableName)) };
    }
    // `existOk`: another process may create it first.
    const table = existing ?? (await db.createEmptyTable(tableName, archiveSchema(options.embedder), { existOk: true }));
    const dimensions = checkSchema(await table.schema(), options.embedder, tableName);
    return { db, table, dimensions };
  } catch (error) {
    connection?.close();
    throw wrap('open', error);
  }
}

/** The archive of a table not created yet: made on the first write, once the embedder knows its size. */
function deferredArchive(options: LanceArchiveOptions, db: Connection, tableName: string): Archive {
  return deferTableCreation({
    embedder: options.embedder,
    tableExists: async () => {
      const found = await openExisting(db, tableName).catch((error: unknown) => {
        throw wrap('open', error);
      });
      found?.close();
      return found !== undefined;
    },
    open: (sized: Embedder) => openLanceArchive({ ...options, embedder: sized }),
    release: () => db.close(),
  });
}

interface ArchiveInput {
  handle: LanceHandle;
  db: Connection;
  weights: { fullText: number; vector: number };
  limits: { searchLimit: number; maxSearchLimit: number };
}

/** The port over an open table. */
function archiveOver({ handle, db, weights, limits }: ArchiveInput): Archive {
  const { namespace, table, upkeep } = handle;
  return {
    async write(entries, options) {
      handle.ensureOpen();
      const held = upkeep.hold();
      try {
        await writeEntries({ handle, entries, withVectors: weights.vector > 0, labelsFree: options?.labelsFree === true });
      } finally {
        // A write that wrote nothing or failed gives the upkeep it held back its timer (one that wrote did so itself).
        if (held && !upkeep.pending()) void upkeep.afterWrite().catch(() => undefined);
      }
    },
    read: (conversationId, labels) => handle.read(conversationId, labels),
    readDigests: (conversationId, labels) => handle.readDigests(conversationId, labels),
    async list(listOptions: ListOptions) {
      handle.ensureOpen();
      const found = await handle.rows({ operation: 'list', conversationId: listOptions.conversationId, where: filterWhere(namespace, listOptions) });
      return found
        .map((row) => ({ entry: fromRow(row), startMs: Number(row[COLUMN.startMs]), endMs: Number(row[COLUMN.endMs]) }))
        .sort(compareEntriesByTime)
        .map(({ entry }) => entry);
    },
    async count(listOptions: ListOptions) {
      handle.ensureOpen();
      return handle.count(filterWhere(namespace, listOptions));
    },
    search: (query) => searchEntries({ handle, query, weights, limits }),
    async mark(conversationId, labels, parentLabel) {
      handle.ensureOpen();
      requireConversationId(conversationId);
      const targets = [...new Set(requireLabels(labels))];
      requireParentLabel(parentLabel);
      if (targets.length === 0) return;
      await handle.mutate('mark', async () => {
        for (const slice of chunked(targets)) {
          await table.update({ values: { [COLUMN.parentLabel]: parentLabel }, where: labelsWhere(namespace, conversationId, slice) });
        }
      });
      await upkeep.afterWrite();
    },
    markEach: (conversationId, marks) => markEach(handle, conversationId, marks),
    async delete(conversationId, labels) {
      handle.ensureOpen();
      requireConversationId(conversationId);
      const targets = [...new Set(requireLabels(labels))];
      if (targets.length === 0) return;
      await handle.mutate('delete', async () => {
        for (const slice of chunked(targets)) await table.delete(labelsWhere(namespace, conversationId, slice));
      });
    },
    async eraseConversation(conversationId) {
      handle.ensureOpen();
      const where = scopeWhere(namespace, conversationId);
      let erased: ArchiveErasure = { entries: 0, rowsRewritten: 0 };
      await handle.mutate('erase', async () => {
        erased = await purgeRows(table, where, ARCHIVE_INDEXES);
      });
      return erased;
    },
    async close() {
      if (handle.isClosed()) return;
      // Upkeep still waiting for the writes to pause runs now, and close waits for it with the writes.
      if (upkeep.pending()) upkeep.flush();
      handle.startClosing();
      await writesSettled(handle.tableKey);
      while (handle.reads.size > 0) await Promise.allSettled([...handle.reads]);
      table.close();
      db.close();
    },
  };
}

async function markEach(handle: LanceHandle, conversationId: string, marks: unknown): Promise<void> {
  const { namespace, table } = handle;
  handle.ensureOpen();
  requireConversationId(conversationId);
  const parents = [...requireMarks(marks)];
  if (parents.length === 0) return;
  // A few parents: one update each (a merge joins the keys of every fragment the key index does not cover yet,
  // which costs several updates). More: one merge of (key, parent) pairs, one table version for all. LanceDB's
  // update takes no CASE, so it cannot set several parents at once.
  const byParent = new Map<string | null, string[]>();
  for (const [label, parentLabel] of parents) {
    const labels = byParent.get(parentLabel) ?? [];
    labels.push(label);
    byParent.set(parentLabel, labels);
  }
  await handle.mutate('mark', async () => {
    if (byParent.size > MARK_UPDATES_AT_MOST) {
      const source = parentsTable(parents.map(([label, parentLabel]) => [rowKey(namespace, conversationId, label), parentLabel]));
      await table.mergeInsert(COLUMN.key).whenMatchedUpdateAll().execute(source);
      return;
    }
    for (const [parentLabel, labels] of byParent) {
      for (const slice of chunked(labels)) {
        await table.update({ values: { [COLUMN.parentLabel]: parentLabel }, where: labelsWhere(namespace, conversationId, slice) });
      }
    }
  });
  await handle.upkeep.afterWrite();
}

/** The table, or undefined when it does not exist (yet). */
async function openExisting(db: Connection, tableName: string): Promise<Table | undefined> {
  try {
    return await db.openTable(tableName);
  } catch (error) {
    if (!/not found|does not exist/i.test(errorMessage(error))) throw error;
    return undefined;
  }
}
