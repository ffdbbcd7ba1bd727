/**
 * The checks of an `append` batch against the stored rows: ids never used before in the conversation,
 * and leading tool results answering the stored group they continue (the batch's own checks are in
 * `../append-batch-checks.ts`). Each failure is an InvalidArgumentError naming `messages[i].<field>`,
 * thrown before the first row is written.
 */
import { sql, type Kysely } from 'kysely';
import { checkLeadingToolResults, idAlreadyUsed, leadingToolResults } from '../append-batch-checks.js';
import type { NormalizedMessage } from '../normalize-new-messages.js';
import type { UsedId } from '../persistence-provider.js';
import type { Database } from './kysely-schema.js';

/** Which conversation the stored checks look in. */
export interface ConversationScope {
  namespace: string;
  conversationId: string;
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
  throw idAlreadyUsed(ids.indexOf(used.id), used.id);
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
    .where('compacted_by', 'is', null)
    .where('role', '<>', 'tool')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  checkLeadingToolResults(leading, opener && { role: opener.role, toolCalls: opener.content.toolCalls });
}
