/**
 * Index policy of the archive table.
 *
 * - Scalar indexes: namespace (BITMAP), conversation_id (BTREE), depth (BITMAP), kind (BITMAP), key (BTREE, the
 *   upsert join key). Full text: an inverted (FTS) index on content (LanceDB defaults: simple tokenizer,
 *   lowercase, English stemming and stop words, ASCII folding; positions off since no phrase queries are made).
 * - No vector index in this version: every query is prefiltered to one conversation, and an exact (flat) search
 *   over a conversation's rows answers in a few milliseconds, while IVF_PQ over 100k rows takes ~90 s to build
 *   on 2 cores and would make results approximate.
 * - Indexes are created once, when the table has rows and one is missing (on open and after writes). An archive opened
 *   with `scalarIndexes: false` creates only the full-text index (the memory-read-latency benchmark compares both).
 * - Rows written after an index was built are "unindexed": LanceDB 0.37 still finds them (full text and filters
 *   scan them flat), only more slowly. Once any index has `optimizeAfterUnindexedRows` unindexed rows,
 *   `optimize()` compacts the small fragments and folds the new rows into every index.
 */
import { Index, type Table } from '@lancedb/lancedb';
import { COLUMN } from './lancedb-schema.js';

export interface IndexSpec {
  column: string;
  make: () => Index;
}

export const ARCHIVE_INDEXES: readonly IndexSpec[] = [
  { column: COLUMN.namespace, make: () => Index.bitmap() },
  { column: COLUMN.conversationId, make: () => Index.btree() },
  { column: COLUMN.depth, make: () => Index.bitmap() },
  { column: COLUMN.kind, make: () => Index.bitmap() },
  { column: COLUMN.key, make: () => Index.btree() },
  { column: COLUMN.content, make: () => Index.fts({ withPosition: false }) },
];

/** The full-text index alone: what an archive opened with `scalarIndexes: false` maintains. */
export const FULL_TEXT_INDEXES: readonly IndexSpec[] = ARCHIVE_INDEXES.filter((spec) => spec.column === COLUMN.content);

/** The table members index maintenance uses. */
export type IndexedTable = Pick<Table, 'countRows' | 'listIndices' | 'createIndex' | 'optimize'>;

export type MaintenanceOutcome =
  | { kind: 'created'; columns: string[] }
  | { kind: 'optimized'; unindexedRows: number }
  | { kind: 'skip'; reason: 'empty table' | 'indexes current' };

/**
 * Create missing indexes (when the table has rows), else optimize when enough rows are unindexed.
 * `run` wraps each LanceDB commit (the caller retries commit conflicts there). `specs`: the indexes to create.
 */
export async function maintainIndexes(
  table: IndexedTable,
  optimizeAfterUnindexedRows: number,
  run: <T>(operation: () => Promise<T>) => Promise<T> = (operation) => operation(),
  specs: readonly IndexSpec[] = ARCHIVE_INDEXES,
): Promise<MaintenanceOutcome> {
  const existing = await table.listIndices();
  const indexed = new Set(existing.flatMap((index) => index.columns));
  const missing = specs.filter((spec) => !indexed.has(spec.column));
  if (missing.length > 0) {
    if ((await table.countRows()) === 0) return { kind: 'skip', reason: 'empty table' };
    for (const spec of missing) {
      await run(() => table.createIndex(spec.column, { config: spec.make(), replace: false }));
    }
    return { kind: 'created', columns: missing.map((spec) => spec.column) };
  }
  const unindexedRows = Math.max(0, ...existing.map((index) => index.numUnindexedRows ?? 0));
  if (unindexedRows < optimizeAfterUnindexedRows) return { kind: 'skip', reason: 'indexes current' };
  await run(() => table.optimize());
  return { kind: 'optimized', unindexedRows };
}
