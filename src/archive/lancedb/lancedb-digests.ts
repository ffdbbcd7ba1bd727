/**
 * The read-back's digests of stored rows (`../entry-digest.ts`), computed by LanceDB's engine in the query's
 * projection: only the identity columns and five 32-character digests per row reach JavaScript, not the rows'
 * content, transcripts and source ids (materializing and parsing those was most of a large write's read-back).
 */
import type { Table } from '@lancedb/lancedb';
import { MemfoldError } from '../../errors.js';
import { DIGEST_SEPARATOR, md5Hex, type EntryDigest } from '../entry-digest.js';
import { COLUMN } from './lancedb-schema.js';

/** DataFusion's `md5` answers a view type Arrow's JavaScript reader does not know: cast to plain UTF-8. */
const md5Of = (sql: string) => `arrow_cast(md5(${sql}), 'Utf8')`;
/** A list of strings joined as `entry-digest.ts` joins it (the separator is a plain character, not SQL syntax). */
const joined = (column: string) => `coalesce(array_to_string(${column}, '${DIGEST_SEPARATOR}'), '')`;
const EMPTY_DIGEST = md5Hex('');

/** The projection: identity columns as stored, the texts and lists as digests. */
function projection(columns: ReadonlySet<string>): Record<string, string> {
  return {
    [COLUMN.namespace]: COLUMN.namespace,
    [COLUMN.conversationId]: COLUMN.conversationId,
    [COLUMN.label]: COLUMN.label,
    [COLUMN.operationId]: COLUMN.operationId,
    [COLUMN.kind]: COLUMN.kind,
    [COLUMN.depth]: COLUMN.depth,
    [COLUMN.count]: COLUMN.count,
    content_md5: md5Of(COLUMN.content),
    // The transcript as stored: its frames (format 2; with the content they rebuild every message), or its JSON on a
    // row of format 1 (which a write of this version never leaves: its read-back sees frames).
    messages_md5: md5Of(columns.has(COLUMN.frames) ? `coalesce(${COLUMN.frames}, ${COLUMN.messages})` : COLUMN.messages),
    source_id_count: `array_length(${COLUMN.sourceIds})`,
    source_ids_md5: md5Of(joined(COLUMN.sourceIds)),
    // A table made before the sessions column has none: every entry reads back without sessions.
    ...(columns.has(COLUMN.sessions) ? { sessions_md5: md5Of(joined(COLUMN.sessions)) } : {}),
  };
}

/** A projected column's values, in row order: read column by column, not through a row object per row. */
type Columns = (name: string) => unknown[];

function fromDigestColumns(column: Columns, length: number): EntryDigest[] {
  const [label, operationId, kind, depth, count, content, messages, sourceIdCount, sourceIds, sessions] = [
    COLUMN.label,
    COLUMN.operationId,
    COLUMN.kind,
    COLUMN.depth,
    COLUMN.count,
    'content_md5',
    'messages_md5',
    'source_id_count',
    'source_ids_md5',
    'sessions_md5',
  ].map(column) as [unknown[], unknown[], unknown[], unknown[], unknown[], unknown[], unknown[], unknown[], unknown[], unknown[]];
  const digests: EntryDigest[] = new Array(length);
  for (let i = 0; i < length; i++) {
    const session = sessions[i];
    const message = messages[i];
    digests[i] = {
      label: String(label[i]),
      operationId: String(operationId[i]),
      kind: String(kind[i]),
      depth: Number(depth[i]),
      count: Number(count[i]),
      content: String(content[i]),
      messages: typeof message === 'string' ? message : null,
      // array_length of an empty list may be null in some engine versions: no ids either way.
      sourceIdCount: Number(sourceIdCount[i] ?? 0),
      sourceIds: String(sourceIds[i]),
      sessions: typeof session === 'string' ? session : EMPTY_DIGEST,
    };
  }
  return digests;
}

export interface DigestQuery {
  table: Table;
  /** Must select rows of one namespace and of the conversations named (`lancedb-filter.ts`); every row is checked. */
  where: string;
  namespace: string;
  conversationIds: ReadonlySet<string>;
  /** The optional columns the table has (`lancedb-optional-columns.ts`). */
  columns: ReadonlySet<string>;
}

/** Digests of the rows matching `where`, with their conversation, refusing any row outside the scope (as the adapter's other reads do). */
export async function readRowDigests(query: DigestQuery): Promise<Array<{ conversationId: string; digest: EntryDigest }>> {
  const found = await query.table.query().where(query.where).select(projection(query.columns)).toArrow();
  const length = found.numRows;
  // A column the projection lacks (sessions on an older table) reads as nulls.
  const column: Columns = (name) => {
    const vector = found.getChild(name);
    return vector ? [...vector] : new Array(length).fill(null);
  };
  const namespaces = column(COLUMN.namespace);
  const conversationIds = column(COLUMN.conversationId).map(String);
  if (namespaces.some((namespace, i) => namespace !== query.namespace || !query.conversationIds.has(conversationIds[i]!))) {
    throw new MemfoldError(
      'archive_error',
      `LanceDB archive read-back returned rows outside namespace ${JSON.stringify(query.namespace)} and conversations ${JSON.stringify([...query.conversationIds])}`,
    );
  }
  return fromDigestColumns(column, length).map((digest, i) => ({ conversationId: conversationIds[i]!, digest }));
}
