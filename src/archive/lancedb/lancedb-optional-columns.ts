/**
 * The columns a table made by an earlier version lacks (`OPTIONAL_COLUMNS`: sessions, transcript frames): reads leave
 * them out until a write (here or in another process) adds them, and the first write adds every missing one, a change
 * of the schema alone (no row is rewritten).
 */
import type { Table } from '@lancedb/lancedb';
import { ENTRY_COLUMNS, OPTIONAL_COLUMNS } from './lancedb-schema.js';

type Fields = { fields: ReadonlyArray<{ name: string }> };

export interface OptionalColumns {
  /** The optional columns the table had at the last look (`selected` looks again while one is missing). */
  present(): ReadonlySet<string>;
  /** The entry columns the table has now: what reads select. */
  selected(): Promise<string[]>;
  /** Adds the missing columns (inside the write chain; another process may add them first). */
  ensure(): Promise<void>;
  /** The table's columns in order, as writes lay them out: fixed once every optional column exists. */
  forWrite(): ReturnType<Table['schema']>;
}

function presentIn(schema: Fields): Set<string> {
  const names = new Set(schema.fields.map((field) => field.name));
  return new Set(OPTIONAL_COLUMNS.map((column) => column.name).filter((name) => names.has(name)));
}

export async function optionalColumnsOf(table: Table): Promise<OptionalColumns> {
  let present = presentIn(await table.schema().catch(() => ({ fields: [] })));
  let writeSchema: Awaited<ReturnType<Table['schema']>> | undefined;
  const complete = () => present.size === OPTIONAL_COLUMNS.length;
  const look = async () => {
    present = presentIn(await table.schema());
  };
  return {
    present: () => present,
    async selected() {
      if (!complete()) await look();
      return ENTRY_COLUMNS.filter((name) => present.has(name) || !OPTIONAL_COLUMNS.some((column) => column.name === name));
    },
    async ensure() {
      if (complete()) return;
      await look();
      const missing = OPTIONAL_COLUMNS.filter((column) => !present.has(column.name));
      if (missing.length === 0) return;
      try {
        await table.addColumns(missing.map(({ name, valueSql }) => ({ name, valueSql })));
      } catch (error) {
        // Another process may have added them meanwhile: only a column still missing is a failure.
        await look();
        if (!complete()) throw error;
      }
      await look();
    },
    async forWrite() {
      if (writeSchema) return writeSchema;
      const schema = await table.schema();
      // memfold adds no other column: once the optional ones exist, the layout is fixed.
      present = presentIn(schema);
      if (complete()) writeSchema = schema;
      return schema;
    },
  };
}
