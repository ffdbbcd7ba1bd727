/**
 * Entries as the Arrow table an archive write hands LanceDB, built column by column into few buffers. Pure.
 */
import { Field, type FixedSizeList, type Float32, List, makeData, RecordBatch, Schema, Struct, Table, Utf8, vectorFromArray, type Data } from 'apache-arrow';
import type { ArchiveEntry } from '../../conversation/types.js';
import type { Embedder } from '../../embedding/embedder.js';
import { MemfoldError } from '../../errors.js';
import { framesJson } from '../transcript-frames.js';
import { archiveSchema, COLUMN, rowKey } from './lancedb-schema.js';

/**
 * Entries (validated by the caller) as an Arrow table with the columns of `tableSchema` (the table's own), in its
 * order, typed as `archiveSchema` types them, built column by column: LanceDB's conversion of row objects (`toRow`)
 * took longer than the merge it feeds. Each vector's values are copied once into one buffer. The types come from
 * this module's Arrow, not the table's schema: LanceDB's Arrow classes may be another copy of the package.
 * Without `vectors` (no search uses them) a nullable vector column gets nulls, and a non-nullable one (a table
 * made before it was nullable) zero vectors; a caller may also leave the column out of `tableSchema` (an append,
 * which LanceDB fills with nulls: the vectors' room never crosses into LanceDB; `appendColumns`).
 */
export function entriesTable(
  tableSchema: { fields: ReadonlyArray<{ name: string; nullable?: boolean }> },
  embedder: Pick<Embedder, 'id' | 'dimensions'>,
  namespace: string,
  entries: readonly ArchiveEntry[],
  times: ReadonlyArray<{ startMs: number; endMs: number }>,
  vectors: readonly Float32Array[] | undefined,
): Table {
  const length = entries.length;
  const column = (field: Field): Data => {
    const values = (pick: (entry: ArchiveEntry, index: number) => unknown) => {
      if (field.type instanceof Utf8) return utf8Data(field.type, entries.map(pick) as Array<string | null>);
      if (field.type instanceof List && field.type.valueType instanceof Utf8)
        return stringListData(field.type, entries.map(pick) as Array<readonly string[] | null>);
      return vectorFromArray(entries.map(pick), field.type).data[0]!;
    };
    switch (field.name) {
      case COLUMN.key:
        return values((entry) => rowKey(namespace, entry.conversationId, entry.label));
      case COLUMN.namespace:
        return values(() => namespace);
      case COLUMN.conversationId:
        return values((entry) => entry.conversationId);
      case COLUMN.kind:
        return values((entry) => entry.kind);
      case COLUMN.depth:
        return values((entry) => entry.depth);
      case COLUMN.startTime:
        return values((entry) => entry.start);
      case COLUMN.endTime:
        return values((entry) => entry.end);
      case COLUMN.startMs:
        return values((_, i) => times[i]!.startMs);
      case COLUMN.endMs:
        return values((_, i) => times[i]!.endMs);
      case COLUMN.count:
        return values((entry) => entry.count);
      case COLUMN.label:
        return values((entry) => entry.label);
      case COLUMN.sourceIds:
        return values((entry) => entry.sourceIds);
      case COLUMN.parentLabel:
        return values((entry) => entry.parentLabel ?? null);
      case COLUMN.operationId:
        return values((entry) => entry.operationId);
      case COLUMN.content:
        return values((entry) => entry.content);
      case COLUMN.messages:
        return values(() => null);
      case COLUMN.frames:
        return values((entry) => (entry.messages === undefined ? null : framesJson(entry.content, entry.messages, entry.conversationId)));
      case COLUMN.sessions:
        return values((entry) => entry.sessions ?? null);
      case COLUMN.vector: {
        const type = field.type as FixedSizeList<Float32>;
        const flat = new Float32Array(length * type.listSize);
        vectors?.forEach((vector, i) => flat.set(vector, i * type.listSize));
        const child = makeData({ type: type.children[0]!.type, length: flat.length, nullCount: 0, data: flat });
        // No vectors: nulls where the column allows them (the bitmap all unset), zero vectors where it does not.
        const nulls = vectors === undefined && field.nullable ? { nullCount: length, nullBitmap: new Uint8Array((length + 7) >> 3) } : { nullCount: 0 };
        return makeData({ type, length, child, ...nulls });
      }
      default:
        throw new MemfoldError('archive_error', `LanceDB archive table has a column memfold does not write: ${field.name}`);
    }
  };
  // A write stores transcripts as frames only: the caller adds the column to an older table first.
  if (entries.some((entry) => entry.messages !== undefined) && !tableSchema.fields.some((field) => field.name === COLUMN.frames)) {
    throw new MemfoldError('archive_error', `LanceDB archive table lacks the ${COLUMN.frames} column a transcript is written to`);
  }
  const ours = archiveSchema(embedder);
  const fields = tableSchema.fields.flatMap((field) => {
    const known = ours.fields.find((candidate) => candidate.name === field.name);
    if (!known) throw new MemfoldError('archive_error', `LanceDB archive table has a column memfold does not write: ${field.name}`);
    if (field.name !== COLUMN.vector) return [known];
    // The vector column keeps the table's nullability: LanceDB refuses nullable data for a non-nullable column.
    return field.nullable === false ? [new Field(known.name, known.type, false)] : [known];
  });
  const schema = new Schema(fields, ours.metadata);
  const children = fields.map(column);
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
  return new Table(schema, [batch]);
}

/**
 * The table's columns an append hands LanceDB, which fills the nullable ones left out with nulls: all but a nullable
 * vector column when there are no vectors, and but the nullable columns a later version added (this version's rows
 * have nothing to put there, as an earlier version's rows had no frames). A merge needs every column: it is given
 * the vector nulls, and refuses a column it does not know.
 */
export function appendColumns(
  tableSchema: { fields: ReadonlyArray<{ name: string; nullable?: boolean }> },
  withVectors: boolean,
): { fields: ReadonlyArray<{ name: string; nullable?: boolean }> } {
  const known = new Set<string>(Object.values(COLUMN));
  return {
    fields: tableSchema.fields.filter((field) => {
      if (field.nullable === false) return true;
      return field.name === COLUMN.vector ? withVectors : known.has(field.name);
    }),
  };
}

/** Arrow's value offsets of a variable-size column: value i spans [offsets[i], offsets[i + 1]); a null takes no room. */
function offsetsOf<T>(values: ReadonlyArray<T | null | undefined>, size: (value: T) => number): { offsets: Int32Array; end: number; nulls: number } {
  const offsets = new Int32Array(values.length + 1);
  let end = 0;
  let nulls = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) nulls++;
    else end += size(value);
    offsets[i + 1] = end;
  }
  return { offsets, end, nulls };
}

/** A UTF-8 column in one buffer, encoded by Node (Arrow's builder encodes string by string into growing buffers). */
function utf8Data(type: Utf8, values: ReadonlyArray<string | null>): Data<Utf8> {
  const { offsets, end: bytes, nulls } = offsetsOf(values, (value) => Buffer.byteLength(value, 'utf8'));
  const data = Buffer.allocUnsafe(bytes);
  let at = 0;
  values.forEach((value) => {
    if (value !== null && value !== undefined) at += data.write(value, at, 'utf8');
  });
  return makeData({
    type,
    length: values.length,
    nullCount: nulls,
    valueOffsets: offsets,
    data: new Uint8Array(data.buffer, data.byteOffset, bytes),
    ...(nulls > 0 ? { nullBitmap: validity(values) } : {}),
  });
}

/**
 * A list-of-strings column (source ids, sessions) as offsets over one UTF-8 child, built like `utf8Data`: Arrow's
 * builder took about a third of a large write's Arrow time on these two columns alone.
 */
function stringListData(type: List<Utf8>, lists: ReadonlyArray<readonly string[] | null>): Data<List<Utf8>> {
  const { offsets, nulls } = offsetsOf(lists, (list) => list.length);
  const child = utf8Data(
    type.valueType,
    lists.flatMap((list) => list ?? []),
  );
  return makeData({ type, length: lists.length, nullCount: nulls, valueOffsets: offsets, child, ...(nulls > 0 ? { nullBitmap: validity(lists) } : {}) });
}

/** Arrow's validity bitmap: bit i set when value i is present. */
function validity(values: ReadonlyArray<unknown>): Uint8Array {
  const bitmap = new Uint8Array((values.length + 7) >> 3);
  values.forEach((value, i) => {
    if (value !== null && value !== undefined) bitmap[i >> 3]! |= 1 << (i & 7);
  });
  return bitmap;
}
