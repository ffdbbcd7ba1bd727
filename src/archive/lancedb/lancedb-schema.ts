/**
 * The archive table's columns, its explicit Arrow schema, and the mapping between rows and ArchiveEntry.
 * Pure: no I/O.
 */
import { Field, FixedSizeList, Float32, Float64, Int32, List, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import type { ArchiveEntry, ConversationMessage } from '../../conversation/types.js';
import { MemfoldError } from '../../errors.js';
import type { Embedder } from '../../embedding/embedder.js';
import { compareEntriesByTime, validateEntry } from '../archive-entry-checks.js';
import { messagesFromFrames } from '../transcript-frames.js';

/** The entry rules live with the port (every adapter checks the same); re-exported for the adapter's imports. */
export { compareEntriesByTime, validateEntry };

/** Column names. `start`/`end` are SQL keywords, so times are stored as `start_time`/`end_time` (ISO, as given) and `*_ms` (for range filters). */
export const COLUMN = {
  key: 'key',
  namespace: 'namespace',
  conversationId: 'conversation_id',
  kind: 'kind',
  depth: 'depth',
  startTime: 'start_time',
  endTime: 'end_time',
  startMs: 'start_ms',
  endMs: 'end_ms',
  count: 'count',
  label: 'label',
  sourceIds: 'source_ids',
  parentLabel: 'parent_label',
  operationId: 'operation_id',
  content: 'content',
  messages: 'messages',
  sessions: 'sessions',
  frames: 'frames',
  vector: 'vector',
} as const;

/**
 * Columns a table made by an earlier version lacks, each with the value of the rows written before it existed (as
 * LanceDB's `addColumns` takes it): such a table still opens and is read (its entries have no sessions, its
 * transcripts are in `messages`), and its first write adds them, a change of the schema alone.
 */
export const OPTIONAL_COLUMNS: ReadonlyArray<{ name: string; valueSql: string }> = [
  { name: COLUMN.sessions, valueSql: "arrow_cast(NULL, 'List(Utf8)')" },
  { name: COLUMN.frames, valueSql: "arrow_cast(NULL, 'Utf8')" },
];

/** Schema metadata key recording which embedder filled the vector column. */
export const EMBEDDER_METADATA_KEY = 'memfold.embedder';

/** Every column but the vector: what reads select (vectors are large and never returned). */
export const ENTRY_COLUMNS: string[] = Object.values(COLUMN).filter((name) => name !== COLUMN.vector);

/** The explicit schema, so nullable columns and the vector size are right even when the first write is empty. */
export function archiveSchema(embedder: Pick<Embedder, 'id' | 'dimensions'>): Schema {
  const text = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);
  return new Schema(
    [
      text(COLUMN.key),
      text(COLUMN.namespace),
      text(COLUMN.conversationId),
      text(COLUMN.kind),
      new Field(COLUMN.depth, new Int32(), false),
      text(COLUMN.startTime),
      text(COLUMN.endTime),
      new Field(COLUMN.startMs, new Float64(), false),
      new Field(COLUMN.endMs, new Float64(), false),
      new Field(COLUMN.count, new Int32(), false),
      text(COLUMN.label),
      new Field(COLUMN.sourceIds, new List(new Field('item', new Utf8(), true)), false),
      text(COLUMN.parentLabel, true),
      text(COLUMN.operationId),
      text(COLUMN.content),
      // Format 1 transcripts (every message as JSON); rows written since hold null here and their frames below.
      text(COLUMN.messages, true),
      new Field(COLUMN.sessions, new List(new Field('item', new Utf8(), true)), true),
      // Format 2 transcripts: the messages as frames into `content` (`../transcript-frames.ts`).
      text(COLUMN.frames, true),
      // Nullable: rows written while no search uses vectors have none (`entriesTable`). Tables made before kept a
      // non-nullable column; they get zero vectors instead, which a cosine search skips as it skips nulls.
      new Field(COLUMN.vector, new FixedSizeList(embedder.dimensions, new Field('item', new Float32(), true)), true),
    ],
    new Map([[EMBEDDER_METADATA_KEY, embedder.id]]),
  );
}

/**
 * Fail clearly when an existing table cannot hold this embedder's vectors (another size) or lacks columns.
 * A table that records another embedder id of the same size is refused too: its vectors live in another space.
 * An embedder whose `dimensions` is 0 (learned from its first answer) takes the table's size; its id is still
 * checked. Returns the table's vector size.
 */
export function checkSchema(schema: Schema, embedder: Pick<Embedder, 'id' | 'dimensions'>, tableName: string): number {
  const names = new Set(schema.fields.map((field) => field.name));
  const missing = Object.values(COLUMN).filter((name) => !names.has(name) && !OPTIONAL_COLUMNS.some((optional) => optional.name === name));
  if (missing.length > 0) {
    throw new MemfoldError('archive_error', `LanceDB table "${tableName}" is not a memfold archive: missing columns ${missing.join(', ')}`, {
      details: { tableName, missing },
    });
  }
  const vectorType = schema.fields.find((field) => field.name === COLUMN.vector)?.type;
  const size = vectorType instanceof FixedSizeList ? vectorType.listSize : (vectorType as { listSize?: number } | undefined)?.listSize;
  const storedId = schema.metadata.get(EMBEDDER_METADATA_KEY);
  if (size === undefined || !Number.isInteger(size) || size < 1) {
    throw new MemfoldError('archive_error', `LanceDB table "${tableName}" is not a memfold archive: its vector column has no fixed size`, {
      details: { tableName },
    });
  }
  if (embedder.dimensions !== 0 && size !== embedder.dimensions) {
    throw new MemfoldError(
      'archive_error',
      `LanceDB table "${tableName}" holds ${size}-dimensional vectors${storedId ? ` (from embedder ${storedId})` : ''}, ` +
        `but embedder ${embedder.id} makes ${embedder.dimensions}-dimensional vectors: use the same embedder, or another table name or folder`,
      { details: { tableName, tableDimensions: size, embedderId: embedder.id, embedderDimensions: embedder.dimensions, storedEmbedderId: storedId } },
    );
  }
  if (storedId !== undefined && storedId !== embedder.id) {
    throw new MemfoldError(
      'archive_error',
      `LanceDB table "${tableName}" was filled by embedder ${storedId}, not ${embedder.id}: vectors of different embedders are not comparable; ` +
        'use the same embedder, or another table name or folder',
      { details: { tableName, storedEmbedderId: storedId, embedderId: embedder.id } },
    );
  }
  return size;
}

/**
 * The embedder as the table sees it: `dimensions` is the table's vector size (known from the schema before the
 * embedder has answered once), and a vector of another size fails as `embedding_error` (reason
 * `dimension mismatch`) instead of reaching LanceDB: a write fails cleanly, a search falls back to full text.
 */
export function embedderForTable(embedder: Embedder, dimensions: number, tableName: string): Embedder {
  return {
    id: embedder.id,
    dimensions,
    maxEmbeddingsPerCall: embedder.maxEmbeddingsPerCall,
    async embed(texts, options) {
      const vectors = await embedder.embed(texts, options);
      const wrong = vectors.find((vector) => vector.length !== dimensions);
      if (wrong !== undefined) {
        throw new MemfoldError(
          'embedding_error',
          `Embedder ${embedder.id} returned ${wrong.length}-dimensional vectors, but LanceDB table "${tableName}" holds ${dimensions}-dimensional ones: ` +
            'use the embedder that filled it (same model and size), or another table name or folder',
          { details: { reason: 'dimension mismatch', tableName, tableDimensions: dimensions, vectorDimensions: wrong.length } },
        );
      }
      return vectors;
    },
  };
}

/** The upsert key: unambiguous for any namespace, conversation id and label. */
export function rowKey(namespace: string, conversationId: string, label: string): string {
  return JSON.stringify([namespace, conversationId, label]);
}

/** How every key of one namespace and conversation starts, and no other key (JSON strings are unambiguous). */
export function rowKeyPrefix(namespace: string, conversationId: string): string {
  return `${JSON.stringify([namespace, conversationId]).slice(0, -1)},`;
}

/** The label a key names. */
export function labelOfKey(key: string): string {
  return String((JSON.parse(key) as unknown[])[2]);
}

/**
 * (key, parent label) pairs as a two-column Arrow table: a merge of it updates only the parent column of the rows
 * whose keys match. Arrow, not row objects: LanceDB's row conversion would ask for the vector column too.
 */
export function parentsTable(pairs: ReadonlyArray<readonly [key: string, parentLabel: string | null]>): Table {
  return new Table({
    [COLUMN.key]: vectorFromArray(
      pairs.map(([key]) => key),
      new Utf8(),
    ),
    [COLUMN.parentLabel]: vectorFromArray(
      pairs.map(([, parent]) => parent),
      new Utf8(),
    ),
  });
}

/**
 * One row for an entry (validated by the caller), in format 1 (its messages as JSON, no frames), as LanceDB's row
 * conversion takes it: the row versions before format 2 wrote, kept to make such tables in tests. Writes go through
 * `entriesTable` (format 2).
 */
export function toRow(namespace: string, entry: ArchiveEntry, times: { startMs: number; endMs: number }, vector: Float32Array): Record<string, unknown> {
  return {
    [COLUMN.key]: rowKey(namespace, entry.conversationId, entry.label),
    [COLUMN.namespace]: namespace,
    [COLUMN.conversationId]: entry.conversationId,
    [COLUMN.kind]: entry.kind,
    [COLUMN.depth]: entry.depth,
    [COLUMN.startTime]: entry.start,
    [COLUMN.endTime]: entry.end,
    [COLUMN.startMs]: times.startMs,
    [COLUMN.endMs]: times.endMs,
    [COLUMN.count]: entry.count,
    [COLUMN.label]: entry.label,
    [COLUMN.sourceIds]: [...entry.sourceIds],
    [COLUMN.parentLabel]: entry.parentLabel ?? null,
    [COLUMN.operationId]: entry.operationId,
    [COLUMN.content]: entry.content,
    [COLUMN.messages]: entry.messages === undefined ? null : JSON.stringify(entry.messages),
    [COLUMN.sessions]: entry.sessions === undefined ? null : [...entry.sessions],
    [COLUMN.frames]: null,
    [COLUMN.vector]: vector,
  };
}

/** Arrow list values arrive as Vectors; plain arrays pass through. */
function stringArray(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.map(String);
  const maybe = value as { toArray?: () => ArrayLike<unknown> };
  return typeof maybe.toArray === 'function' ? Array.from(maybe.toArray(), String) : [];
}

/**
 * The entry a row holds: transcripts' messages rebuilt from their frames and content (format 2) or parsed from
 * `messages` (format 1), `parentLabel` left out when null.
 */
export function fromRow(row: Record<string, unknown>): ArchiveEntry {
  const entry: ArchiveEntry = {
    kind: row[COLUMN.kind] as ArchiveEntry['kind'],
    label: String(row[COLUMN.label]),
    conversationId: String(row[COLUMN.conversationId]),
    depth: Number(row[COLUMN.depth]),
    start: String(row[COLUMN.startTime]),
    end: String(row[COLUMN.endTime]),
    count: Number(row[COLUMN.count]),
    content: String(row[COLUMN.content]),
    sourceIds: stringArray(row[COLUMN.sourceIds]),
    operationId: String(row[COLUMN.operationId]),
  };
  const parentLabel = row[COLUMN.parentLabel];
  if (typeof parentLabel === 'string') entry.parentLabel = parentLabel;
  const frames = row[COLUMN.frames];
  const messages = row[COLUMN.messages];
  if (typeof frames === 'string') entry.messages = messagesFromFrames(entry.content, frames, entry.conversationId);
  else if (typeof messages === 'string') entry.messages = JSON.parse(messages) as ConversationMessage[];
  // Null on rows written before the column existed (or without sessions); missing on tables that lack it.
  const sessions = row[COLUMN.sessions];
  if (sessions !== null && sessions !== undefined) entry.sessions = stringArray(sessions);
  return entry;
}
