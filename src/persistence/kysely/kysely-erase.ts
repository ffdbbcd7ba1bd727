/** Erasing a conversation from the live store: every table's rows of it (up to a boundary), in one transaction. */
import { sql, type Kysely } from 'kysely';
import { requireText } from '../../conversation/text.js';
import type { ConversationErasure, EraseConversationOptions } from '../persistence-provider.js';
import { guard } from '../persistence-error.js';
import { requireEraseBoundary } from '../erase-boundary.js';
import { inTransaction } from './kysely-transaction.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';

/**
 * Delete the conversation's rows everywhere; with `throughSeq`, messages after it stay (with their id ledger entries
 * and the conversation row), except tool results answering a call at or below it (a tool group is never split). Order matters: the message rows go before the operation rows, since an overlay row names
 * its operation (`compacted_by`, no cascade), and the conversation row goes last, after its dependents were counted.
 * The conversation row is locked first, so an append running meanwhile waits for the commit (and, past the boundary,
 * is kept).
 */
export async function eraseConversation(
  db: Kysely<Database>,
  context: StoreContext,
  conversationId: string,
  options: EraseConversationOptions = {},
): Promise<ConversationErasure> {
  requireText(conversationId, 'conversationId');
  const throughSeq = requireEraseBoundary(options.throughSeq);
  const { namespace } = context;
  return guard(`erase conversation ${JSON.stringify(conversationId)}`, () =>
    inTransaction(db, async (trx) => {
      await trx.selectFrom('conversations').select('id').where('namespace', '=', namespace).where('id', '=', conversationId).forUpdate().execute();
      const ofConversation = (table: 'messages' | 'message_ids' | 'compaction_operations' | 'compaction_pauses' | 'token_calibrations') =>
        trx.deleteFrom(table).where('namespace', '=', namespace).where('conversation_id', '=', conversationId);
      let messageQuery = ofConversation('messages');
      if (throughSeq !== undefined) messageQuery = messageQuery.where('seq', '<=', throughSeq);
      let messages = Number((await messageQuery.executeTakeFirst()).numDeletedRows);
      if (throughSeq !== undefined) {
        // Tool results kept ahead of every other message answer a call the erase removed (only results stand between
        // a call and its results): kept alone, they would answer nothing. They go with their call.
        const orphans = await ofConversation('messages')
          .where('role', '=', 'tool')
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('messages as m')
                  .select('m.id')
                  .whereRef('m.namespace', '=', 'messages.namespace')
                  .whereRef('m.conversation_id', '=', 'messages.conversation_id')
                  .where('m.role', '<>', 'tool')
                  .whereRef('m.seq', '<', 'messages.seq'),
              ),
            ),
          )
          .executeTakeFirst();
        messages += Number(orphans.numDeletedRows);
      }
      const kept = await trx
        .selectFrom('messages')
        .select(sql<string>`count(*)`.as('n'))
        .where('namespace', '=', namespace)
        .where('conversation_id', '=', conversationId)
        .executeTakeFirstOrThrow();
      // The ledger keeps the ids of the messages kept: every other id it holds was an erased message's.
      const messageIds = await ofConversation('message_ids')
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('messages as m')
                .select('m.id')
                .whereRef('m.namespace', '=', 'message_ids.namespace')
                .whereRef('m.conversation_id', '=', 'message_ids.conversation_id')
                .whereRef('m.id', '=', 'message_ids.id'),
            ),
          ),
        )
        .executeTakeFirst();
      const loopGuard = Number((await ofConversation('compaction_pauses').executeTakeFirst()).numDeletedRows);
      const calibration = Number((await ofConversation('token_calibrations').executeTakeFirst()).numDeletedRows);
      const operations = await ofConversation('compaction_operations').executeTakeFirst();
      const messagesKept = Number(kept.n);
      const conversations =
        messagesKept > 0
          ? 0
          : Number(
              (await trx.deleteFrom('conversations').where('namespace', '=', namespace).where('id', '=', conversationId).executeTakeFirst()).numDeletedRows,
            );
      return {
        conversations,
        messages,
        messagesKept,
        messageIds: Number(messageIds.numDeletedRows),
        operations: Number(operations.numDeletedRows),
        loopGuard,
        calibration,
      };
    }),
  );
}
