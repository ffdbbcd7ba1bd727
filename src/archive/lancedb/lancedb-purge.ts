/**
 * Physical removal of rows from the archive table, for erasing a conversation.
 *
 * A LanceDB delete only writes a deletion file: the data files keep the rows' bytes, and old table versions keep
 * referencing them (and the index files built over them). `optimize()` rewrites a fragment without its deleted rows
 * only when at least 10% of it is deleted (Lance's `materialize_deletions_threshold`, which the JavaScript client
 * does not expose), so a conversation that is a small part of a large fragment would stay on disk. Hence:
 * 1. delete the rows, remembering which fragments held them (a row id is `fragment << 32 | offset` on tables without
 *    stable row ids, which is how memfold creates them);
 * 2. rewrite every other row of those fragments (an update that sets a column to itself moves the row to a new
 *    fragment), so the old fragments hold no live row and are dropped;
 * 3. `optimize()`: compaction, and the indexes (full text too) brought up to date over the rows that remain;
 * 4. if the table still holds deleted rows somewhere (older copies of the conversation's rows, replaced by a
 *    merge, or deleted by an undone compaction, can sit in any fragment), rewrite every row and optimize again;
 * 5. rebuild every index from the rows that remain: an index update after a delete keeps the deleted rows' values
 *    (seen with the BTREE indexes on conversation_id and key, which store the ids verbatim), and the full-text index's
 *    token lists would keep the conversation's words;
 * 6. `optimize({ cleanupOlderThan: now })`: drop every older version, with the data, deletion and index files only
 *    they referenced.
 * Every step is idempotent, so a purge cut short by a crash is finished by running it again.
 */
import type { Table } from '@lancedb/lancedb';
import type { ArchiveErasure } from '../archive.js';
import type { IndexSpec } from './lancedb-indexes.js';
import { COLUMN } from './lancedb-schema.js';

/** The table members a purge uses. */
export type PurgedTable = Pick<Table, 'query' | 'delete' | 'update' | 'optimize' | 'stats' | 'listIndices' | 'createIndex' | 'dropIndex'>;

/** An update that changes nothing but still rewrites each matched row into a new fragment. */
const REWRITE = { [COLUMN.depth]: COLUMN.depth };

/** Where-clause selecting the rows of one fragment by row id. */
export function fragmentWhere(fragment: bigint): string {
  return `_rowid >= ${fragment << 32n} AND _rowid < ${(fragment + 1n) << 32n}`;
}

/** The fragments holding these row ids. */
export function fragmentsOf(rowIds: ReadonlyArray<bigint | number>): bigint[] {
  return [...new Set(rowIds.map((id) => BigInt(id) >> 32n))];
}

/** True when the data files hold more rows than are live: some deleted row is still stored. */
export async function holdsDeletedRows(table: Pick<Table, 'stats'>): Promise<boolean> {
  const { numRows, fragmentStats } = await table.stats();
  const stored = Math.round(fragmentStats.lengths.mean * fragmentStats.numFragments);
  return fragmentStats.numFragments > 0 && stored > numRows;
}

async function rewrite(table: PurgedTable, where: string): Promise<number> {
  return (await table.update({ where, valuesSql: REWRITE })).rowsUpdated;
}

/**
 * Rebuild, from the rows now live, each index of `specs` the table has. An emptied table has nothing to index: its
 * indexes are dropped, and the archive's index upkeep creates them again with the next rows.
 */
async function rebuildIndexes(table: PurgedTable, specs: readonly IndexSpec[]): Promise<void> {
  const existing = await table.listIndices();
  if ((await table.stats()).numRows === 0) {
    for (const index of existing) await table.dropIndex(index.name);
    return;
  }
  const indexed = new Set(existing.flatMap((index) => index.columns));
  for (const spec of specs.filter((s) => indexed.has(s.column))) await table.createIndex(spec.column, { config: spec.make(), replace: true });
}

/** Delete the rows matching `where` and make them physically gone (see the file comment); `specs`: the table's index policy. */
export async function purgeRows(table: PurgedTable, where: string, specs: readonly IndexSpec[]): Promise<ArchiveErasure> {
  const found = (await table.query().where(where).withRowId().select([COLUMN.key]).toArray()) as Array<{ _rowid: bigint }>;
  if (found.length > 0) await table.delete(where);
  let rowsRewritten = 0;
  for (const fragment of fragmentsOf(found.map((row) => row._rowid))) rowsRewritten += await rewrite(table, fragmentWhere(fragment));
  await table.optimize();
  if (await holdsDeletedRows(table)) {
    rowsRewritten += await rewrite(table, 'true');
    await table.optimize();
  }
  await rebuildIndexes(table, specs);
  // A cutoff taken after the rewrites: every version before the current one goes, and with them the old files.
  await table.optimize({ cleanupOlderThan: new Date() });
  return { entries: found.length, rowsRewritten };
}
