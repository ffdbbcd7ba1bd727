/**
 * The message-table operations of the port, written once against a Kysely handle: the store calls
 * them on the pool (each opening its own transaction) and `transaction()` on its Kysely transaction.
 */
import { requireCountLiveOptions } from '../count-live-options.js';
import { sql, type Kysely } from 'kysely';
import type { ConversationMessage, NewMessage } from '../../conversation/types.js';
import { InvalidArgumentError, MemfoldError } from '../../errors.js';
import type {
  CountLiveOptions,
  CommitClearing,
  CommitCompaction,
  CommitReport,
  LoadHistoryOptions,
  PersistenceTransaction,
  UsedId,
} from '../persistence-provider.js';
import { checkCommit } from '../commit-input.js';
import { guard } from '../persistence-error.js';
import { checkBatchIds } from '../append-batch-checks.js';
import { clipArchiveId } from '../clip-archive-id.js';
import { checkAgainstStored, findUsedIds } from './kysely-append-checks.js';
import { messageDigest } from '../../conversation/message-digest.js';
import { requireConversationId } from '../../conversation/conversation-id.js';
import { requireTextArray } from '../../conversation/text.js';
import { normalizeNewMessages, type NormalizedMessage } from '../normalize-new-messages.js';
import { checkCommitClearing, clearingRowProblem } from '../clearing-checks.js';
import { refusedOperationWrite, upsertOperationRow } from './kysely-operation-log.js';
import { inTransaction } from './kysely-transaction.js';
import { requireLockHeld } from './kysely-conversation-lock.js';
import { dropTokenCalibration } from './kysely-token-calibration.js';
import { toMessage, type MessageRow } from './kysely-row-mapping.js';
import { clipArchiveThroughSeq, openingSeqOf } from './kysely-clip-archive.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';

/** Rows per INSERT: 8 parameters a row stays far below PostgreSQL's 65,535-parameter limit. */
const INSERT_BATCH = 1000;

const MESSAGE_COLUMNS = ['conversation_id', 'id', 'seq', 'role', 'kind', 'content', 'created_at', 'compacted_by'] as const;

export { clipArchiveId };

/** The ledger digest of a message about to be stored. */
function digestOf(row: NormalizedMessage): string {
  const { text, ...rest } = row.content;
  return messageDigest({ role: row.role, content: text, ...rest });
}

export { inTransaction };

/**
 * The port's PersistenceTransaction over `db`. Multi-statement operations (append, deleteByIds,
 * commitCompaction) open their own transaction on a pool handle and join the caller's on a transaction handle.
 */
export function kyselyMessageOperations(db: Kysely<Database>, context: StoreContext): PersistenceTransaction {
  const { namespace, clock, maxMessageBytes } = context;

  /** Create the conversation row if needed and take its row lock until the transaction ends. */
  async function touchConversation(trx: Kysely<Database>, conversationId: string, reserve: number): Promise<number> {
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

  /** Delete those of `ids` that are live: rows an overlay compaction marked are not the live history's to delete. */
  async function deleteIds(trx: Kysely<Database>, conversationId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await trx
      .deleteFrom('messages')
      .where('namespace', '=', namespace)
      .where('conversation_id', '=', conversationId)
      .where('compacted_by', 'is', null)
      // One array parameter, however many ids.
      .where(sql<boolean>`id = any(${ids}::text[])`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Mark those of `ids` that are live messages as compacted by `operationId` (overlay mode). */
  async function markIds(trx: Kysely<Database>, conversationId: string, ids: string[], operationId: string): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await trx
      .updateTable('messages')
      .set({ compacted_by: operationId })
      .where('namespace', '=', namespace)
      .where('conversation_id', '=', conversationId)
      .where('compacted_by', 'is', null)
      .where('kind', '=', 'message')
      .where(sql<boolean>`id = any(${ids}::text[])`)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  return {
    async append(conversationId: string, messages: NewMessage[]): Promise<ConversationMessage[]> {
      requireConversationId(conversationId);
      const rows = normalizeNewMessages(messages, { maxMessageBytes });
      checkBatchIds(rows, clipArchiveId(conversationId));
      if (rows.length === 0) return [];
      return guard(`append to conversation ${JSON.stringify(conversationId)}`, () =>
        inTransaction(db, async (trx) => {
          // The upsert locks the conversation row, so concurrent appends take turns and get contiguous seqs.
          const first = await touchConversation(trx, conversationId, rows.length);
          // A default time is read under the conversation's row lock, so default times follow seq order
          // even when appends race.
          const now = clock().toISOString();
          // A refusal here rolls back the upsert above: nothing of the batch is written.
          await checkAgainstStored(trx, { namespace, conversationId }, rows);
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
            }));
            await trx
              .insertInto('message_ids')
              .values(
                batch.map((row, offset) => ({
                  namespace,
                  conversation_id: conversationId,
                  id: row.id,
                  digest: digestOf(rows[start + offset]!),
                })),
              )
              .execute();
            const inserted = await trx.insertInto('messages').values(batch).returning(MESSAGE_COLUMNS).execute();
            stored.push(...inserted.map(toMessage));
          }
          return stored.sort((a, b) => a.seq - b.seq);
        }),
      );
    },

    async deleteByIds(conversationId: string, ids: string[]): Promise<number> {
      requireConversationId(conversationId);
      const wanted = requireTextArray(ids, 'ids');
      return guard(`delete messages of conversation ${JSON.stringify(conversationId)}`, () =>
        inTransaction(db, async (trx) => {
          const deleted = await deleteIds(trx, conversationId, wanted);
          if (deleted > 0) {
            await trx
              .updateTable('conversations')
              .set({ updated_at: clock().toISOString() })
              .where('namespace', '=', namespace)
              .where('id', '=', conversationId)
              .execute();
          }
          return deleted;
        }),
      );
    },

    async findUsedIds(conversationId: string, ids: string[]): Promise<UsedId[]> {
      requireConversationId(conversationId);
      const wanted = requireTextArray(ids, 'ids');
      return guard(`look up used ids of conversation ${JSON.stringify(conversationId)}`, () => findUsedIds(db, { namespace, conversationId }, wanted));
    },

    async loadHistory(conversationId: string, options: LoadHistoryOptions = {}): Promise<ConversationMessage[]> {
      requireConversationId(conversationId);
      const includeCompacted = options?.includeCompacted ?? false;
      if (typeof includeCompacted !== 'boolean') throw new InvalidArgumentError('options.includeCompacted', 'must be a boolean');
      return guard(`load conversation ${JSON.stringify(conversationId)}`, async () => {
        let query = db.selectFrom('messages').select(MESSAGE_COLUMNS).where('namespace', '=', namespace).where('conversation_id', '=', conversationId);
        if (!includeCompacted) query = query.where('compacted_by', 'is', null);
        const rows = await query.orderBy('seq').execute();
        return rows.map(toMessage);
      });
    },

    async countLive(conversationId: string, ids: string[], options: CountLiveOptions = {}): Promise<number> {
      requireConversationId(conversationId);
      const wanted = requireTextArray(ids, 'ids');
      const clearedOnly = requireCountLiveOptions(options);
      if (wanted.length === 0) return 0;
      return guard(`count live messages of conversation ${JSON.stringify(conversationId)}`, async () => {
        const row = await db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<string>().as('live'))
          .where('namespace', '=', namespace)
          .where('conversation_id', '=', conversationId)
          .where('compacted_by', 'is', null)
          .where(sql<boolean>`id = any(${wanted}::text[])`)
          .$if(clearedOnly, (query) => query.where(sql<boolean>`content->>'clearedOutputLabel' is not null`))
          .executeTakeFirstOrThrow();
        return Number(row.live);
      });
    },

    async commitCompaction(commit: CommitCompaction): Promise<CommitReport> {
      const { conversationId, operationId, deleteIds: wanted, clipArchive: text, labels, mode, usage } = checkCommit(commit);
      return guard(`commit compaction ${operationId} of conversation ${JSON.stringify(conversationId)}`, () =>
        inTransaction(db, async (trx) => {
          // Under a conversation lock whose connection was lost, another process may be compacting: commit nothing.
          await requireLockHeld(trx, context.heldLock?.(conversationId));
          // The conversation row's lock orders this commit with appends: every seq below its next one was appended before.
          const nextSeq = await touchConversation(trx, conversationId, 0);
          const compactedThroughSeq = wanted.length > 0 ? nextSeq - 1 : await clipArchiveThroughSeq(trx, namespace, conversationId);
          // Read before the commit takes any row: at the first compaction, the lowest seq is the opening's.
          const openingSeq = await openingSeqOf(trx, namespace, conversationId);
          const now = clock().toISOString();
          // The operation row first: an overlay mark refers to it. Any throw below rolls it back with the rest.
          const row = { id: operationId, conversationId, status: 'committed' as const, mode, messageIds: wanted, labels, error: null, usage: usage ?? null };
          if (!(await upsertOperationRow(trx, namespace, row, now))) {
            throw await refusedOperationWrite(trx, namespace, row, { id: 'commit.operationId', mode: 'commit.mode' });
          }
          const taken = mode === 'overlay' ? await markIds(trx, conversationId, wanted, operationId) : await deleteIds(trx, conversationId, wanted);
          const expected = new Set(wanted).size;
          if (taken !== expected) {
            // Some archived message is no longer live: the caller planned on a stale history. Throwing rolls back.
            throw new MemfoldError(
              'persistence_error',
              `Commit of ${operationId} expected to ${mode === 'overlay' ? 'mark' : 'delete'} ${expected} live messages but found ${taken}`,
              { details: { field: 'commit.deleteIds' } },
            );
          }
          const clip = await trx
            .insertInto('messages')
            .values({
              namespace,
              conversation_id: conversationId,
              id: clipArchiveId(conversationId),
              seq: 0,
              role: 'system',
              kind: 'clip_archive',
              content: JSON.stringify({
                text,
                ...(compactedThroughSeq === undefined ? {} : { compactedThroughSeq }),
                ...(openingSeq === undefined ? {} : { openingSeq }),
              }),
              created_at: now,
            })
            // seq 0 is the clip-archive's slot: replace whatever holds it.
            .onConflict((conflict) =>
              conflict.columns(['namespace', 'conversation_id', 'seq']).doUpdateSet((eb) => ({
                id: eb.ref('excluded.id'),
                content: eb.ref('excluded.content'),
                created_at: eb.ref('excluded.created_at'),
              })),
            )
            .returning(MESSAGE_COLUMNS)
            .executeTakeFirstOrThrow();
          // The context the calibration was measured on is gone: dropped in this transaction, so no process counts
          // the new live rows with it.
          await dropTokenCalibration(trx, namespace, conversationId);
          return { deleted: mode === 'delete' ? taken : 0, marked: mode === 'overlay' ? taken : 0, clipArchive: toMessage(clip) };
        }),
      );
    },

    async commitClearing(input: CommitClearing): Promise<ConversationMessage[]> {
      const { conversationId, operationId, cleared, labels } = checkCommitClearing(input);
      const ids = cleared.map((c) => c.id);
      return guard(`commit clearing ${operationId} of conversation ${JSON.stringify(conversationId)}`, () =>
        inTransaction(db, async (trx) => {
          await requireLockHeld(trx, context.heldLock?.(conversationId));
          // The conversation's row lock orders this with appends and compactions of the same conversation.
          await touchConversation(trx, conversationId, 0);
          const rows = await trx
            .selectFrom('messages')
            .select(MESSAGE_COLUMNS)
            .where('namespace', '=', namespace)
            .where('conversation_id', '=', conversationId)
            .where(sql<boolean>`id = any(${ids}::text[])`)
            .forUpdate()
            .execute();
          const byId = new Map(rows.map((row) => [row.id, row]));
          const contents = cleared.map((c, i) => {
            const row = byId.get(c.id);
            const problem = clearingRowProblem(row && toMessage(row), i);
            // Throwing rolls back: a clearing is all or nothing.
            if (problem) throw problem;
            return JSON.stringify({ ...row!.content, text: c.content, clearedOutputLabel: c.label });
          });
          const updated = await sql<MessageRow>`
            update messages as m set content = v.content::jsonb
            from unnest(${ids}::text[], ${contents}::text[]) as v(id, content)
            where m.namespace = ${namespace} and m.conversation_id = ${conversationId} and m.id = v.id
            returning m.conversation_id, m.id, m.seq, m.role, m.kind, m.content, m.created_at, m.compacted_by`.execute(trx);
          const row = {
            id: operationId,
            conversationId,
            kind: 'clear_tool_outputs' as const,
            status: 'committed' as const,
            mode: undefined,
            messageIds: ids,
            labels,
            error: null,
          };
          if (!(await upsertOperationRow(trx, namespace, row, clock().toISOString()))) {
            throw await refusedOperationWrite(trx, namespace, row, { id: 'commit.operationId', mode: 'commit.mode' });
          }
          // The context the calibration was measured on changed, as after any compaction.
          await dropTokenCalibration(trx, namespace, conversationId);
          return updated.rows.map(toMessage).sort((a, b) => a.seq - b.seq);
        }),
      );
    },
  };
}
