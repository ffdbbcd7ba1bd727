/**
 * The checks of an `append` batch that look across messages: ids unique in the batch and in the
 * conversation, and every tool result answering a call that exists. Each failure is an
 * InvalidArgumentError naming `messages[i].<field>`, thrown before the first row is written.
 */
import { sql, type Kysely } from 'kysely';
import { InvalidArgumentError } from '../../errors.js';
import type { NormalizedMessage } from './normalize-new-messages.js';
import type { Database } from './schema.js';

/** Which conversation the stored checks look in. */
export interface ConversationScope {
  namespace: string;
  conversationId: string;
}

/** Checks that need no database: duplicate ids within the batch, and the clip-archive's reserved id. */
export function checkBatchIds(rows: readonly NormalizedMessage[], clipArchiveId: string): void {
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    if (row.id === clipArchiveId) {
      throw new InvalidArgumentError(`messages[${index}].id`, `${JSON.stringify(row.id)} is reserved for the conversation's clip-archive`);
    }
    const first = seen.get(row.id);
    if (first !== undefined) throw new InvalidArgumentError(`messages[${index}].id`, `duplicates messages[${first}].id (${JSON.stringify(row.id)})`);
    seen.set(row.id, index);
  });
}

/**
 * Tool results of the batch whose call is not in an earlier assistant message of the batch: their
 * call must already be stored. Call ids may repeat across turns (datasets reuse them), so this is an
 * existence check, not a one-to-one pairing.
 */
export function toolResultsNeedingStoredCall(rows: readonly NormalizedMessage[]): Array<{ index: number; toolCallId: string }> {
  const calls = new Set<string>();
  const pending: Array<{ index: number; toolCallId: string }> = [];
  rows.forEach((row, index) => {
    if (row.role === 'assistant') for (const call of row.content.toolCalls ?? []) calls.add(call.id);
    const toolCallId = row.content.toolCallId;
    if (row.role === 'tool' && toolCallId !== undefined && !calls.has(toolCallId)) pending.push({ index, toolCallId });
  });
  return pending;
}

/**
 * Run inside the append's transaction, after the conversation row is locked, so that a concurrent
 * append or compaction cannot change the answer before the insert.
 */
export async function checkAgainstStored(trx: Kysely<Database>, scope: ConversationScope, rows: readonly NormalizedMessage[]): Promise<void> {
  await refuseStoredIds(trx, scope, rows);
  await refuseUnansweredToolResults(trx, scope, toolResultsNeedingStoredCall(rows));
}

async function refuseStoredIds(trx: Kysely<Database>, scope: ConversationScope, rows: readonly NormalizedMessage[]): Promise<void> {
  const ids = rows.map((row) => row.id);
  const stored = await trx
    .selectFrom('messages')
    .select('id')
    .where('namespace', '=', scope.namespace)
    .where('conversation_id', '=', scope.conversationId)
    .where(sql<boolean>`id = any(${ids}::text[])`)
    .limit(1)
    .executeTakeFirst();
  if (stored === undefined) return;
  const index = ids.indexOf(stored.id);
  throw new InvalidArgumentError(`messages[${index}].id`, `${JSON.stringify(stored.id)} is already stored in this conversation`);
}

async function refuseUnansweredToolResults(
  trx: Kysely<Database>,
  scope: ConversationScope,
  pending: ReadonlyArray<{ index: number; toolCallId: string }>,
): Promise<void> {
  if (pending.length === 0) return;
  const wanted = [...new Set(pending.map((p) => p.toolCallId))];
  // One query for every id: which of them some live assistant message holds as a tool call
  // (jsonb containment: content.toolCalls has an element whose id is that value).
  const found = await sql<{ id: string }>`
    select wanted.id from unnest(${wanted}::text[]) as wanted(id)
    where exists (
      select 1 from messages
      where namespace = ${scope.namespace} and conversation_id = ${scope.conversationId} and role = 'assistant'
        and content @> jsonb_build_object('toolCalls', jsonb_build_array(jsonb_build_object('id', wanted.id)))
    )`.execute(trx);
  const answered = new Set(found.rows.map((row) => row.id));
  const missing = pending.find((p) => !answered.has(p.toolCallId));
  if (missing === undefined) return;
  throw new InvalidArgumentError(
    `messages[${missing.index}].toolCallId`,
    `${JSON.stringify(missing.toolCallId)} answers no tool call of an earlier assistant message in this batch or in the conversation's live history`,
  );
}
