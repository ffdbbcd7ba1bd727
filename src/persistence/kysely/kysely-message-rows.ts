/**
 * Row-level steps of the message table, each inside the caller's transaction: the conversation row (seqs and its row
 * lock), the append's inserts, and taking archived rows out of the live history (deleted, or marked in overlay mode).
 */
import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { ConversationMessage } from '../../conversation/types.js';
import { messageDigest } from '../../conversation/message-digest.js';
import type { NormalizedMessage } from '../normalize-new-messages.js';
import { jsonToMessage } from './kysely-row-mapping.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';

/** Rows per INSERT: 8 parameters a row stays far below PostgreSQL's 65,535-parameter limit. */
const INSERT_BATCH = 1000;

export const MESSAGE_COLUMNS = ['conversation_id', 'id', 'seq', 'role', 'kind', 'content', 'created_at', 'compacted_by', 'pinned'] as const;

/** One conversation inside a transaction: what every row step is given. */
export interface InConversation {
  trx: Kysely<Database>;
  context: StoreContext;
  conversationId: string;
}

/** The live rows of one conversation among `ids` (one array parameter, however many ids): what the row steps act on. */
function liveAmong({ context, conversationId }: InConversation, ids: readonly string[]) {
  return (eb: ExpressionBuilder<Database, 'messages'>) =>
    eb.and([
      eb('namespace', '=', context.namespace),
      eb('conversation_id', '=', conversationId),
      eb('compacted_by', 'is', null),
      sql<boolean>`id = any(${ids}::text[])`,
    ]);
}

/**
 * A message row as one JSON array text (`MessageJsonRow`, read by `jsonToMessage`). `created_at` as whole milliseconds
 * since the epoch, truncated as the driver's Date is, computed exactly on every supported version (before PostgreSQL 14
 * `extract` returns a double, exact only for whole numbers).
 */
const MESSAGE_JSON = sql<string>`json_build_array(id, seq, role, kind, content,
  extract(epoch from date_trunc('second', created_at))::bigint * 1000 + (extract(microseconds from created_at)::bigint / 1000) % 1000,
  compacted_by, pinned)::text`;

/** The ledger digest of a message about to be stored. */
function digestOf(row: NormalizedMessage): string {
  const { text, ...rest } = row.content;
  return messageDigest({ role: row.role, content: text, ...rest });
}

/** Create the conversation row if needed and take its row lock until the transaction ends; returns the first seq reserved. */
export async function touchConversation({ trx, context, conversationId }: InConversation, reserve: number): Promise<number> {
  const { namespace, clock } = context;
  const now = clock().toISOString();
  const row = await trx
    .insertInto('conversations')
    .values({ namespace, id: conversationId, created_at: now, updated_at: now, next_seq: 1 + reserve })
    .onConflict((conflict) =>
      conflict.columns(['namespace', 'id']).doUpdateSet({
        next_seq: sql<number>`conversations.next_seq + ${reserve}::bigint`,
        updated_at: now,
      }),
    )
    .returning('next_seq')
    .executeTakeFirstOrThrow();
  // The first seq reserved by this call.
  return Number(row.next_seq) - reserve;
}

/** Insert `rows` from seq `first` on, in batches, each id in the ledger with its digest; returns them as stored. */
export async function insertMessages(
  { trx, context, conversationId }: InConversation,
  input: { rows: readonly NormalizedMessage[]; first: number; now: string },
): Promise<ConversationMessage[]> {
  const { namespace } = context;
  const { rows, first, now } = input;
  const stored: ConversationMessage[] = [];
  for (let start = 0; start < rows.length; start += INSERT_BATCH) {
    const batch = rows.slice(start, start + INSERT_BATCH).map((row, offset) => ({
      namespace,
      conversation_id: conversationId,
      id: row.id,
      seq: first + start + offset,
      role: row.role,
      kind: 'message',
      content: JSON.stringify(row.content),
      created_at: row.createdAt ?? now,
      pinned: row.pinned === true,
    }));
    const ledger = batch.map((row, offset) => ({ namespace, conversation_id: conversationId, id: row.id, digest: digestOf(rows[start + offset]!) }));
    await trx.insertInto('message_ids').values(ledger).execute();
    const inserted = await trx.insertInto('messages').values(batch).returning(MESSAGE_JSON.as('row')).execute();
    for (const row of inserted) stored.push(jsonToMessage(conversationId, row.row));
  }
  return stored.sort((a, b) => a.seq - b.seq);
}

/**
 * Delete those of `ids` that are live (rows an overlay compaction marked are not the live history's to delete); with
 * `sparePinned`, as a compaction's commit, not the pinned ones.
 */
export async function deleteIds(at: InConversation, ids: string[], options: { sparePinned?: boolean } = {}): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await at.trx
    .deleteFrom('messages')
    .where(liveAmong(at, ids))
    .$if(options.sparePinned === true, (query) => query.where('pinned', '=', false))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Mark those of `ids` that are live messages, not pinned, as compacted by `operationId` (overlay mode). */
export async function markIds(at: InConversation, ids: string[], operationId: string): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await at.trx
    .updateTable('messages')
    .set({ compacted_by: operationId })
    .where(liveAmong(at, ids))
    .where('kind', '=', 'message')
    .where('pinned', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Set the pin of those of `ids` that are live messages; returns how many that is. */
export async function setPinnedRows(at: InConversation, ids: string[], pinned: boolean): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await at.trx.updateTable('messages').set({ pinned }).where(liveAmong(at, ids)).where('kind', '=', 'message').executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** How many of `ids` are pinned rows: a compaction's commit takes none. */
export async function countPinned({ trx, context, conversationId }: InConversation, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const row = await trx
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<string>().as('pinned'))
    .where('namespace', '=', context.namespace)
    .where('conversation_id', '=', conversationId)
    .where('pinned', '=', true)
    .where(sql<boolean>`id = any(${ids}::text[])`)
    .executeTakeFirstOrThrow();
  return Number(row.pinned);
}

/** The conversation's rows in seq order: the live ones, or with those an overlay compaction marked. */
export async function selectHistory({ trx, context, conversationId }: InConversation, includeCompacted: boolean): Promise<ConversationMessage[]> {
  let query = trx
    .selectFrom('messages')
    .select(MESSAGE_JSON.as('row'))
    .where('namespace', '=', context.namespace)
    .where('conversation_id', '=', conversationId);
  if (!includeCompacted) query = query.where('compacted_by', 'is', null);
  const rows = await query.orderBy('seq').execute();
  return rows.map((row) => jsonToMessage(conversationId, row.row));
}

/** How many of `ids` are live rows (only those holding a cleared output's placeholder, with `clearedOnly`). */
export async function countLiveRows(at: InConversation, ids: string[], clearedOnly: boolean): Promise<number> {
  const row = await at.trx
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<string>().as('live'))
    .where(liveAmong(at, ids))
    .$if(clearedOnly, (query) => query.where(sql<boolean>`content->>'clearedOutputLabel' is not null`))
    .executeTakeFirstOrThrow();
  return Number(row.live);
}

/** How many of `ids` are live rows, and how many of those hold a cleared output's placeholder: one statement. */
export async function countLiveAndClearedRows(at: InConversation, ids: string[]): Promise<{ live: number; cleared: number }> {
  const row = await at.trx
    .selectFrom('messages')
    .select([(eb) => eb.fn.countAll<string>().as('live'), sql<string>`count(*) filter (where content->>'clearedOutputLabel' is not null)`.as('cleared')])
    .where(liveAmong(at, ids))
    .executeTakeFirstOrThrow();
  return { live: Number(row.live), cleared: Number(row.cleared) };
}

/** Delete those of `ids` that are live, and note the change on the conversation row when any was. */
export async function deleteLive(at: InConversation, ids: string[]): Promise<number> {
  const deleted = await deleteIds(at, ids);
  if (deleted > 0) {
    await at.trx
      .updateTable('conversations')
      .set({ updated_at: at.context.clock().toISOString() })
      .where('namespace', '=', at.context.namespace)
      .where('id', '=', at.conversationId)
      .execute();
  }
  return deleted;
}
