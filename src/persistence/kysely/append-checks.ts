/**
 * The checks of an `append` batch that look across messages: ids unique in the batch and never used
 * before in the conversation, and every tool result answering a call of the group it belongs to. Each failure is an
 * InvalidArgumentError naming `messages[i].<field>`, thrown before the first row is written.
 */
import { sql, type Kysely } from 'kysely';
import { InvalidArgumentError } from '../../errors.js';
import type { NormalizedMessage } from './normalize-new-messages.js';
import type { UsedId } from '../persistence-provider.js';
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
 * A tool result answers a call of the assistant message that opens its group: the nearest earlier
 * message that is not a tool result (the OpenAI chat contract). Anything between a call and its
 * result would let a compaction archive the call and keep the result live. Results in the batch
 * after its first other message are checked here; the leading ones (the batch continues a stored
 * group, as an agent loop appends results) are returned for the stored check.
 */
export function leadingToolResults(rows: readonly NormalizedMessage[]): Array<{ index: number; toolCallId: string }> {
  const leading: Array<{ index: number; toolCallId: string }> = [];
  let group: Set<string> | undefined;
  rows.forEach((row, index) => {
    const toolCallId = row.content.toolCallId;
    if (row.role !== 'tool') {
      group = new Set(row.role === 'assistant' ? (row.content.toolCalls ?? []).map((c) => c.id) : []);
    } else if (toolCallId !== undefined) {
      if (group === undefined) leading.push({ index, toolCallId });
      else if (!group.has(toolCallId)) throw unanswered(index, toolCallId);
    }
  });
  return leading;
}

function unanswered(index: number, toolCallId: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `messages[${index}].toolCallId`,
    `${JSON.stringify(toolCallId)} answers no tool call of the assistant message it follows (only tool results may stand between a call and its result)`,
  );
}

/**
 * Run inside the append's transaction, after the conversation row is locked, so that a concurrent
 * append or compaction cannot change the answer before the insert.
 */
export async function checkAgainstStored(trx: Kysely<Database>, scope: ConversationScope, rows: readonly NormalizedMessage[]): Promise<void> {
  await refuseStoredIds(trx, scope, rows);
  await refuseUnansweredToolResults(trx, scope, leadingToolResults(rows));
}

/** An id the conversation ever accepted (live, archived, or under a pending operation) is refused. */
async function refuseStoredIds(trx: Kysely<Database>, scope: ConversationScope, rows: readonly NormalizedMessage[]): Promise<void> {
  const ids = rows.map((row) => row.id);
  const [used] = await findUsedIds(trx, scope, ids, 1);
  if (used === undefined) return;
  const index = ids.indexOf(used.id);
  throw new InvalidArgumentError(
    `messages[${index}].id`,
    `${JSON.stringify(used.id)} is already used in this conversation (ids are never reused, also after their message was archived)`,
  );
}

/** Which of `ids` the conversation already used, with their digests; at most `limit` when given. */
export async function findUsedIds(trx: Kysely<Database>, scope: ConversationScope, ids: readonly string[], limit?: number): Promise<UsedId[]> {
  if (ids.length === 0) return [];
  let query = trx
    .selectFrom('message_ids')
    .select(['id', 'digest'])
    .where('namespace', '=', scope.namespace)
    .where('conversation_id', '=', scope.conversationId)
    .where(sql<boolean>`id = any(${[...ids]}::text[])`);
  if (limit !== undefined) query = query.limit(limit);
  const rows = await query.execute();
  return rows.map((row) => (row.digest === null ? { id: row.id } : { id: row.id, digest: row.digest }));
}

/** Leading results of the batch must answer the stored group they continue: the last live message that is not a tool result. */
async function refuseUnansweredToolResults(
  trx: Kysely<Database>,
  scope: ConversationScope,
  leading: ReadonlyArray<{ index: number; toolCallId: string }>,
): Promise<void> {
  if (leading.length === 0) return;
  const opener = await trx
    .selectFrom('messages')
    .select(['role', 'content'])
    .where('namespace', '=', scope.namespace)
    .where('conversation_id', '=', scope.conversationId)
    .where('kind', '=', 'message')
    .where('role', '<>', 'tool')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  const calls = new Set(opener?.role === 'assistant' ? (opener.content.toolCalls ?? []).map((c) => c.id) : []);
  const missing = leading.find((p) => !calls.has(p.toolCallId));
  if (missing !== undefined) throw unanswered(missing.index, missing.toolCallId);
}
