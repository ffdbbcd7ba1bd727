/**
 * The LanceDB adapter of the Archive port: one table of ArchiveEntry rows (summaries and transcripts),
 * scoped by namespace and conversation, searched by full text (BM25) and vectors fused by weighted RRF.
 */
import { connect, MatchQuery, type Connection, type Query, type Table, type VectorQuery } from '@lancedb/lancedb';
import type { ArchiveEntry } from '../../conversation/types.js';
import { embedAll, type Embedder } from '../../embedding/embedder.js';
import { errorMessage, InvalidArgumentError, MemfoldError } from '../../errors.js';
import type { ListOptions, Archive, ArchiveErasure, SearchHit, SearchQuery } from '../archive.js';
import { requireLabels, requireMarks, requireParentLabel } from '../archive-entry-checks.js';
import { chunked, filterWhere, labelsWhere, requireConversationId, scopeWhere, sqlStringList } from './lancedb-filter.js';
import { purgeRows } from './lancedb-purge.js';
import { readRowDigests } from './lancedb-digests.js';
import { entriesTable, withoutNullableVector } from './lancedb-entries-table.js';
import type { EntryDigest } from '../entry-digest.js';
import { ARCHIVE_INDEXES, FULL_TEXT_INDEXES, maintainIndexes } from './lancedb-indexes.js';
import { deferTableCreation } from './lancedb-deferred-archive.js';
import { readOnlyArchive } from '../read-only-archive.js';
import {
  archiveSchema,
  checkSchema,
  COLUMN,
  compareEntriesByTime,
  embedderForTable,
  ENTRY_COLUMNS,
  fromRow,
  parentsTable,
  rowKey,
  SESSIONS_COLUMN_SQL,
  validateEntry,
} from './lancedb-schema.js';
import { enqueueWrite, isCommitConflict, withConflictRetry, writesSettled } from './lancedb-writes.js';
import { candidateDepth, defaultFusionWeights, fuseRankings } from './rrf.js';

export interface LanceArchiveOptions {
  /** Folder or object-store URI (`./.memfold/lancedb`, `s3://bucket/path`). */
  uri: string;
  /**
   * Embeds entry content on write and the query on search. Its `dimensions` fixes the size of a new table's vectors;
   * 0 means it learns the size from its first answer (the OpenAI adapter): an existing table then gives the size,
   * and a missing one is created on the first write (`lancedb-deferred-archive.ts`), so opening makes no embedding call.
   */
  embedder: Embedder;
  /** Scope of conversations sharing the table. Default `default`. */
  namespace?: string;
  /** Default `memfold_archive`. */
  tableName?: string;
  /**
   * Weights of the two rankings in reciprocal rank fusion (k = 60). Default: `{ fullText: 1, vector: 0 }` (full text
   * alone) when `embedder.id` starts with `hashing` (see rrf.ts for why), `{ fullText: 1, vector: 1 }` for any other
   * (semantic) embedder. A weight of 0 turns that ranking off; a ranking alone is not fused.
   */
  fusionWeights?: { fullText: number; vector: number };
  /** Run `optimize()` (compaction + incremental index update) once an index lags this many rows. Default 128. */
  optimizeAfterUnindexedRows?: number;
  /**
   * Milliseconds without a write (or mark) on this archive before index upkeep (`optimize()`) runs. Default 1000. Its
   * cost grows with the whole table, so it waits until a burst of writes (a compaction's) is over instead of running
   * between them, where the burst's next write would wait for it; under writes that never pause it runs at the latest
   * 10 delays after it was first due. 0 runs it right behind the write. `close()` runs one still pending.
   */
  upkeepDelayMs?: number;
  /**
   * Create the scalar indexes (namespace, conversation_id, depth, kind, key) beside the full-text one. Default true.
   * False creates only the full-text index (benchmarks compare the two); indexes that already exist are kept and maintained.
   */
  scalarIndexes?: boolean;
  /**
   * Seconds between checks for commits by other processes. Default 0: every read sees every committed write
   * (a `memory_read` server sees what a compacting process archived a moment ago). Larger is cheaper on object stores.
   */
  readConsistencySeconds?: number;
  /** Passed to LanceDB for object stores (credentials, region, endpoint). */
  storageOptions?: Record<string, string>;
  /** Retries of a write that lost a commit race. Default 4 (delays 25, 50, 100, 200 ms). */
  commitRetries?: number;
  /** Injected for tests. Default `setTimeout`. */
  sleep?: (ms: number) => Promise<void>;
  /** Told when index maintenance fails (the write it followed has succeeded; rows stay searchable). Default: ignored. */
  onWarning?: (message: string, error: unknown) => void;
  /**
   * Only read (`read-only-archive.ts`): opening creates no table (a missing one finds nothing until another process
   * creates it) and runs no index upkeep; every write, mark, delete or erase is refused. For a reader beside the
   * process that writes the archive. Default false.
   */
  readOnly?: boolean;
}

export const DEFAULT_LANCE_ARCHIVE_OPTIONS = Object.freeze({
  namespace: 'default',
  tableName: 'memfold_archive',
  optimizeAfterUnindexedRows: 128,
  upkeepDelayMs: 1000,
  scalarIndexes: true,
  readConsistencySeconds: 0,
  commitRetries: 4,
  commitRetryBaseDelayMs: 25,
  searchLimit: 5,
  maxSearchLimit: 50,
});

const sleepWithTimer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Columns the search and list queries return: the entry, plus the times as numbers for ordering. */
const SELECT = ENTRY_COLUMNS;
/** The same on a table made before the sessions column existed (until its first write adds it). */
const SELECT_WITHOUT_SESSIONS = ENTRY_COLUMNS.filter((name) => name !== COLUMN.sessions);

function hasSessionsColumn(schema: { fields: ReadonlyArray<{ name: string }> }): boolean {
  return schema.fields.some((field) => field.name === COLUMN.sessions);
}
/** A query with at least one letter or digit has words for full text; otherwise only vectors can answer. */
const HAS_WORDS = /[\p{L}\p{N}]/u;

function wrap(operation: string, error: unknown): MemfoldError {
  if (MemfoldError.isInstance(error)) return error;
  return new MemfoldError('archive_error', `LanceDB archive ${operation} failed: ${errorMessage(error)}`, {
    cause: error,
    retryable: isCommitConflict(error),
  });
}

function isZero(vector: Float32Array): boolean {
  return vector.every((value) => value === 0);
}

/** Open (creating when missing) the archive table at `uri` and return the Archive over it. */
/** `markEach` with more distinct parents than this merges instead of updating once per parent. */
const MARK_UPDATES_AT_MOST = 3;

export async function openLanceArchive(options: LanceArchiveOptions): Promise<Archive> {
  const settings = { ...DEFAULT_LANCE_ARCHIVE_OPTIONS, ...definedOnly(options) };
  const { uri } = options;
  const { namespace, tableName } = settings;
  if (typeof uri !== 'string' || uri.length === 0) throw new InvalidArgumentError('uri', 'must be a non-empty string');
  if (typeof namespace !== 'string' || namespace.length === 0) throw new InvalidArgumentError('namespace', 'must be a non-empty string');
  if (!Number.isInteger(options.embedder?.dimensions) || options.embedder.dimensions < 0) {
    throw new InvalidArgumentError('embedder.dimensions', 'must be an integer >= 1, or 0 when the embedder learns it from its first answer');
  }
  for (const [name, min] of [
    ['optimizeAfterUnindexedRows', 1],
    ['readConsistencySeconds', 0],
    ['commitRetries', 0],
    ['upkeepDelayMs', 0],
  ] as const) {
    if (!(Number.isInteger(settings[name]) && settings[name] >= min)) throw new InvalidArgumentError(name, `must be an integer >= ${min}`);
  }
  if (typeof settings.scalarIndexes !== 'boolean') throw new InvalidArgumentError('scalarIndexes', 'must be a boolean');
  const weights = options.fusionWeights ?? defaultFusionWeights(options.embedder.id);
  for (const [name, weight] of Object.entries(weights)) {
    if (!(Number.isFinite(weight) && weight >= 0)) throw new InvalidArgumentError(`fusionWeights.${name}`, 'must be a finite number >= 0');
  }
  const sleep = options.sleep ?? sleepWithTimer;
  const retry = <T>(operation: () => Promise<T>) =>
    withConflictRetry(operation, { retries: settings.commitRetries, baseDelayMs: settings.commitRetryBaseDelayMs, sleep });
  const warn = options.onWarning ?? (() => undefined);
  const tableKey = `${uri}\u0000${tableName}`;
  const guarded = (archive: Archive): Archive => (options.readOnly === true ? readOnlyArchive(archive, `LanceDB archive ${uri}`) : archive);

  let db: Connection;
  let table: Table;
  let dimensions: number;
  let connection: Connection | undefined;
  try {
    connection = await connect(uri, {
      readConsistencyInterval: settings.readConsistencySeconds,
      ...(options.storageOptions ? { storageOptions: options.storageOptions } : {}),
    });
    db = connection;
    const existing = await openExisting(db, tableName);
    if (existing === undefined && (options.embedder.dimensions === 0 || options.readOnly === true)) {
      return guarded(
        deferTableCreation({
          embedder: options.embedder,
          tableExists: async () => {
            const found = await openExisting(db, tableName).catch((error: unknown) => {
              throw wrap('open', error);
            });
            found?.close();
            return found !== undefined;
          },
          open: (sized) => openLanceArchive({ ...options, embedder: sized }),
          release: () => db.close(),
        }),
      );
    }
    // `existOk`: another process may create it first.
    table = existing ?? (await db.createEmptyTable(tableName, archiveSchema(options.embedder), { existOk: true }));
    dimensions = checkSchema(await table.schema(), options.embedder, tableName);
  } catch (error) {
    connection?.close();
    throw wrap('open', error);
  }
  const embedder = options.embedder.dimensions === dimensions ? options.embedder : embedderForTable(options.embedder, dimensions, tableName);
  /** False on a table made before the sessions column: reads leave it out until a write (here or elsewhere) adds it. */
  let sessionsColumn = hasSessionsColumn(await table.schema().catch(() => ({ fields: [] })));
  const selected = async (): Promise<string[]> => {
    if (!sessionsColumn) sessionsColumn = hasSessionsColumn(await table.schema());
    return sessionsColumn ? SELECT : SELECT_WITHOUT_SESSIONS;
  };
  /** Adds the sessions column to a table made before it (inside the write chain; another process may add it first). */
  const ensureSessionsColumn = async (): Promise<void> => {
    if (sessionsColumn || hasSessionsColumn(await table.schema())) {
      sessionsColumn = true;
      return;
    }
    try {
      await table.addColumns([{ name: COLUMN.sessions, valueSql: SESSIONS_COLUMN_SQL }]);
    } catch (error) {
      if (!hasSessionsColumn(await table.schema())) throw error;
    }
    sessionsColumn = true;
  };

  /** The table's columns in order, as writes lay them out: fixed once the sessions column exists (memfold adds no other). */
  let writeSchema: Awaited<ReturnType<Table['schema']>> | undefined;
  const columnsForWrite = async () => {
    if (writeSchema) return writeSchema;
    const schema = await table.schema();
    if (hasSessionsColumn(schema)) writeSchema = schema;
    return schema;
  };

  /** True once every index exists: from then on upkeep only optimizes, and may run behind the writes. */
  let indexesReady = false;
  const maintain = async (): Promise<void> => {
    try {
      const outcome = await maintainIndexes(table, settings.optimizeAfterUnindexedRows, retry, settings.scalarIndexes ? ARCHIVE_INDEXES : FULL_TEXT_INDEXES);
      indexesReady ||= !(outcome.kind === 'skip' && outcome.reason === 'empty table');
    } catch (error) {
      warn(`LanceDB archive index maintenance failed (rows stay searchable, unindexed): ${errorMessage(error)}`, error);
    }
  };
  // A reader leaves upkeep to the archive's writer: creating indexes or optimizing commits a new table version.
  if (options.readOnly !== true) await enqueueWrite(tableKey, maintain);
  let closed = false;
  /**
   * Index upkeep after a write. Creating the indexes (the first rows) is awaited: full-text search needs
   * its index. Later upkeep (optimize) is queued behind the writes instead, once they pause for `upkeepDelayMs`:
   * its cost grows with the whole table, all conversations together, and a compaction should not wait for it
   * between its own writes; rows stay searchable meanwhile. One pending upkeep at a time is enough; `close()`
   * queues one still pending and waits for it.
   */
  let upkeepQueued = false;
  let upkeepTimer: ReturnType<typeof setTimeout> | undefined;
  let upkeepDueSince: number | undefined;
  const queueUpkeep = (): void => {
    if (upkeepTimer !== undefined) clearTimeout(upkeepTimer);
    upkeepTimer = undefined;
    upkeepDueSince = undefined;
    if (upkeepQueued) return;
    upkeepQueued = true;
    void enqueueWrite(tableKey, async () => {
      upkeepQueued = false;
      await maintain();
    });
  };
  const upkeep = async (): Promise<void> => {
    // Index upkeep after the archive started closing would use the table while it closes: the next open does it.
    if (closed) return;
    if (!indexesReady) return enqueueWrite(tableKey, maintain);
    const delay = settings.upkeepDelayMs;
    if (delay === 0) return queueUpkeep();
    const now = Date.now();
    upkeepDueSince ??= now;
    if (upkeepTimer !== undefined) clearTimeout(upkeepTimer);
    // A burst of writes postpones it, but never past 10 delays: writes that never pause still get their indexes.
    upkeepTimer = setTimeout(queueUpkeep, Math.max(0, Math.min(delay, upkeepDueSince + 10 * delay - now)));
    // Upkeep never keeps a process alive: what it leaves undone, the next open does.
    upkeepTimer.unref?.();
  };

  /**
   * A write is starting: a pending upkeep waits for it to end. Its embedding runs before it reaches the table's queue
   * and may take seconds, which would otherwise look like a pause, and an upkeep started then would hold the write
   * (measured: a 5 s optimize inside one compaction of 100k messages). The 10-delay bound still holds.
   */
  const holdUpkeep = (): boolean => {
    if (upkeepTimer === undefined) return false;
    clearTimeout(upkeepTimer);
    upkeepTimer = undefined;
    return true;
  };

  const ensureOpen = (): void => {
    if (closed) throw new MemfoldError('archive_error', 'LanceDB archive is closed');
  };
  /**
   * Native reads running now: `close` waits for them, as for the writes (LanceDB refuses to close a table in use).
   * A read that reaches the table once the archive is closing is refused like any call after `close`.
   */
  const reads = new Set<Promise<unknown>>();
  const reading = <T>(start: () => Promise<T>): Promise<T> => {
    ensureOpen();
    const work = start();
    reads.add(work);
    void work.finally(() => reads.delete(work)).catch(() => undefined);
    return work;
  };
  /** Serialize a mutation on this table, retry its commit conflicts, wrap its errors. */
  const mutate = (operation: string, task: () => Promise<void>): Promise<void> => {
    // A write that reaches the queue once the archive is closing is refused: `close` waits only for those queued before.
    ensureOpen();
    return enqueueWrite(tableKey, async () => {
      try {
        await retry(task);
      } catch (error) {
        throw wrap(operation, error);
      }
    });
  };
  /**
   * Rows of one conversation matching `where` (which must start with its scope); `build` turns the plain query
   * into a full-text or vector query (it must return the query to run). Every row is checked against the scope
   * too, so a row of another scope can never come back, even if a where-clause were wrong.
   */
  const rows = async (
    operation: string,
    conversationId: string,
    where: string,
    build?: (query: Query) => Query | VectorQuery,
    score?: '_score' | '_distance',
  ): Promise<Record<string, unknown>[]> => {
    let found: Record<string, unknown>[];
    try {
      // A search names its score column: LanceDB otherwise adds it itself and logs a deprecation warning
      // on stderr for every query (the projection will stop adding it).
      found = await reading(async () => {
        const columns = await selected();
        const plain = table
          .query()
          .where(where)
          .select(score ? [...columns, score] : columns);
        const query = build ? build(plain) : plain;
        return (await query.toArray()) as Record<string, unknown>[];
      });
    } catch (error) {
      throw wrap(operation, error);
    }
    if (found.some((row) => row[COLUMN.namespace] !== namespace || row[COLUMN.conversationId] !== conversationId)) {
      throw new MemfoldError(
        'archive_error',
        `LanceDB archive ${operation} returned rows outside namespace and conversation ${JSON.stringify([namespace, conversationId])}`,
      );
    }
    return found;
  };

  const readEntries = async (conversationId: string, labels: unknown): Promise<ArchiveEntry[]> => {
    ensureOpen();
    requireConversationId(conversationId);
    const wanted = requireLabels(labels);
    const found = new Map<string, ArchiveEntry>();
    for (const slice of chunked([...new Set(wanted)])) {
      for (const row of await rows('read', conversationId, labelsWhere(namespace, conversationId, slice))) {
        const entry = fromRow(row);
        found.set(entry.label, entry);
      }
    }
    return wanted.flatMap((label) => {
      const entry = found.get(label);
      return entry ? [entry] : [];
    });
  };

  /** Whether any of `keys` is a stored row (the write queue is held: nothing writes meanwhile). */
  const anyStored = async (keys: readonly string[]): Promise<boolean> => {
    for (const slice of chunked(keys)) {
      const found = await table
        .query()
        .where(`${COLUMN.key} IN ${sqlStringList(slice)}`)
        .select([COLUMN.key])
        .limit(1)
        .toArray();
      if (found.length > 0) return true;
    }
    return false;
  };

  /** The error of a write some of whose labels another operation holds, naming them. */
  const labelsTakenError = async (entries: readonly ArchiveEntry[], chosen: readonly number[]): Promise<MemfoldError> => {
    const taken: string[] = [];
    for (const index of chosen) {
      const entry = entries[index]!;
      const [stored] = await readEntries(entry.conversationId, [entry.label]);
      if (stored !== undefined && stored.operationId !== entry.operationId) taken.push(`${entry.label} (operation ${stored.operationId})`);
    }
    return new MemfoldError(
      'archive_error',
      `LanceDB archive write refused: ${taken.length > 0 ? taken.join(', ') : 'some labels'} already belong to another operation, and a write never replaces another operation's row`,
      {
        details: { labels: taken },
      },
    );
  };

  /** `write` itself: validate, embed, then append (or merge) in the table's queue. */
  const writeEntries = async (entries: ArchiveEntry[]): Promise<void> => {
    if (!Array.isArray(entries)) throw new InvalidArgumentError('entries', 'must be an array');
    if (entries.length === 0) return;
    const times = entries.map((entry, index) => validateEntry(entry, index));
    // Within one call the last entry of a label wins, as if written one after another.
    const latest = new Map<string, number>();
    entries.forEach((entry, index) => latest.set(rowKey(namespace, entry.conversationId, entry.label), index));
    const chosen = [...latest.values()].sort((a, b) => a - b);
    // Vectors only where a search will use them: with the vector ranking off (the hashing default) rows are stored
    // without one, and a later search with vectors on finds them by full text alone.
    const vectors =
      weights.vector > 0
        ? await embedAll(
            embedder,
            chosen.map((index) => entries[index]!.content),
          )
        : undefined;
    if (vectors && (vectors.length !== chosen.length || vectors.some((vector) => vector.length !== embedder.dimensions))) {
      throw new MemfoldError(
        'embedding_error',
        `Embedder ${embedder.id} returned vectors of the wrong count or size (expected ${chosen.length} x ${embedder.dimensions})`,
      );
    }
    const chosenEntries = chosen.map((index) => entries[index]!);
    const chosenTimes = chosen.map((index) => times[index]!);
    let refused = 0;
    const keys = chosenEntries.map((entry) => rowKey(namespace, entry.conversationId, entry.label));
    await mutate('write', async () => {
      await ensureSessionsColumn();
      const columns = await columnsForWrite();
      const dataFor = (schema: typeof columns | ReturnType<typeof withoutNullableVector>) =>
        entriesTable(schema, embedder, namespace, chosenEntries, chosenTimes, vectors);
      // Most writes name no stored label: those append. A merge joins the keys of every fragment the key index
      // does not cover yet, so between index upkeeps it costs several appends; a lookup by key does not.
      // Writes of a conversation never race (one table queue here, the conversation's lock across processes).
      if (!(await anyStored(keys))) {
        await table.add(dataFor(vectors ? columns : withoutNullableVector(columns)));
        return;
      }
      const data = dataFor(columns);
      // A label is replaced only by a write of the operation that holds it (a retry): never another's row.
      const merged = await table
        .mergeInsert(COLUMN.key)
        .whenMatchedUpdateAll({ where: `target.${COLUMN.operationId} = source.${COLUMN.operationId}` })
        .whenNotMatchedInsertAll()
        .execute(data);
      refused = data.numRows - merged.numInsertedRows - merged.numUpdatedRows;
    });
    await upkeep();
    if (refused > 0) throw await labelsTakenError(entries, chosen);
  };

  return guarded({
    async write(entries: ArchiveEntry[]): Promise<void> {
      ensureOpen();
      const held = holdUpkeep();
      try {
        await writeEntries(entries);
      } finally {
        // A write that wrote nothing or failed gives the upkeep it held back its timer (one that wrote did so itself).
        if (held && upkeepTimer === undefined) void upkeep().catch(() => undefined);
      }
    },

    read: readEntries,

    async readDigests(conversationId, labels) {
      ensureOpen();
      requireConversationId(conversationId);
      const wanted = requireLabels(labels);
      const found = new Map<string, EntryDigest>();
      try {
        for (const slice of chunked([...new Set(wanted)])) {
          const where = labelsWhere(namespace, conversationId, slice);
          const digests = await reading(async () => {
            await selected(); // learns whether the sessions column exists yet
            return readRowDigests({ table, where, namespace, conversationId, sessionsColumn });
          });
          for (const digest of digests) found.set(digest.label, digest);
        }
      } catch (error) {
        throw wrap('read-back', error);
      }
      return wanted.flatMap((label) => found.get(label) ?? []);
    },

    async list(listOptions: ListOptions) {
      ensureOpen();
      const found = await rows('list', listOptions.conversationId, filterWhere(namespace, listOptions));
      return found
        .map((row) => ({ entry: fromRow(row), startMs: Number(row[COLUMN.startMs]), endMs: Number(row[COLUMN.endMs]) }))
        .sort(compareEntriesByTime)
        .map(({ entry }) => entry);
    },

    async search(query: SearchQuery): Promise<SearchHit[]> {
      ensureOpen();
      if (typeof query?.query !== 'string') throw new InvalidArgumentError('query', 'must be a string');
      const limit = query.limit ?? settings.searchLimit;
      if (!Number.isInteger(limit) || limit < 1) throw new InvalidArgumentError('limit', `must be an integer from 1 to ${settings.maxSearchLimit}`);
      const take = Math.min(limit, settings.maxSearchLimit);
      const where = filterWhere(namespace, query);
      const depth = candidateDepth(take, weights);
      const byKey = new Map<string, Record<string, unknown>>();
      const keysOf = (found: Record<string, unknown>[]) =>
        found.map((row) => {
          const key = String(row[COLUMN.key]);
          if (!byKey.has(key)) byKey.set(key, row);
          return key;
        });
      const fullTextSearch = async (): Promise<Record<string, unknown>[]> =>
        HAS_WORDS.test(query.query) && weights.fullText > 0
          ? // A structured MatchQuery: the text is never parsed as query syntax, so no input can break it.
            rows('full-text search', query.conversationId, where, (q) => q.fullTextSearch(new MatchQuery(query.query, COLUMN.content)).limit(depth), '_score')
          : [];
      const vectorSearch = async (): Promise<Record<string, unknown>[]> => {
        if (weights.vector <= 0 || query.query.trim().length === 0) return [];
        let vector: Float32Array | undefined;
        try {
          [vector] = await embedAll(embedder, [query.query]);
        } catch (error) {
          // A failing (remote) embedder must not take search down: full text still answers.
          warn(`Embedder ${embedder.id} failed; searching by full text only: ${errorMessage(error)}`, error);
          return [];
        }
        // A zero vector (no features) has no direction: cosine search cannot rank by it.
        if (!vector || isZero(vector)) return [];
        return rows('vector search', query.conversationId, where, (q) => q.nearestTo(vector).distanceType('cosine').limit(depth), '_distance');
      };
      const [fullText, nearest] = await Promise.all([fullTextSearch(), vectorSearch()]);
      const ranked = fuseRankings([
        { ids: keysOf(fullText), weight: weights.fullText },
        { ids: keysOf(nearest), weight: weights.vector },
      ]);
      return ranked.slice(0, take).map(({ id, score }) => ({ entry: fromRow(byKey.get(id)!), score }));
    },

    async mark(conversationId, labels, parentLabel) {
      ensureOpen();
      requireConversationId(conversationId);
      const targets = [...new Set(requireLabels(labels))];
      requireParentLabel(parentLabel);
      if (targets.length === 0) return;
      await mutate('mark', async () => {
        for (const slice of chunked(targets)) {
          await table.update({ values: { [COLUMN.parentLabel]: parentLabel }, where: labelsWhere(namespace, conversationId, slice) });
        }
      });
      await upkeep();
    },

    async markEach(conversationId, marks) {
      ensureOpen();
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
      await mutate('mark', async () => {
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
      await upkeep();
    },

    async delete(conversationId, labels) {
      ensureOpen();
      requireConversationId(conversationId);
      const targets = [...new Set(requireLabels(labels))];
      if (targets.length === 0) return;
      await mutate('delete', async () => {
        for (const slice of chunked(targets)) await table.delete(labelsWhere(namespace, conversationId, slice));
      });
    },

    async eraseConversation(conversationId) {
      ensureOpen();
      const where = scopeWhere(namespace, conversationId);
      let erased: ArchiveErasure = { entries: 0, rowsRewritten: 0 };
      await mutate('erase', async () => {
        erased = await purgeRows(table, where, ARCHIVE_INDEXES);
      });
      return erased;
    },

    async close() {
      if (closed) return;
      // Upkeep still waiting for the writes to pause runs now, and close waits for it with the writes.
      if (upkeepTimer !== undefined) queueUpkeep();
      closed = true;
      await writesSettled(tableKey);
      while (reads.size > 0) await Promise.allSettled([...reads]);
      table.close();
      db.close();
    },
  });
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

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
