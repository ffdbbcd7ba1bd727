/** Erasing a conversation from the live store: every table's rows of it, in one transaction. */
import type { Kysely } from 'kysely';
import { requireText } from '../../conversation/text.js';
import type { ConversationErasure } from '../persistence-provider.js';
import { guard } from '../persistence-error.js';
import { inTransaction } from './kysely-transaction.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';

/** Tables whose rows belong to a conversation row (the foreign keys cascade; counted before the row goes). */
const DEPENDENT_TABLES = ['messages', 'message_ids', 'compaction_pauses', 'token_calibrations'] as const;

/**
 * Delete the conversation's rows everywhere. Order matters: the message rows go before the operation rows, since an
 * overlay row names its operation (`compacted_by`, no cascade), and the conversation row goes last, after its
 * dependents were counted. The conversation row is locked first, so an append running meanwhile waits for the commit.
 */
export async function eraseConversation(db: Kysely<Database>, context: StoreContext, conversationId: string): Promise<ConversationErasure> {
  requireText(conversationId, 'conversationId');
  const { namespace } = context;
  return guard(`erase conversation ${JSON.stringify(conversationId)}`, () =>
    inTransaction(db, async (trx) => {
      await trx.selectFrom('conversations').select('id').where('namespace', '=', namespace).where('id', '=', conversationId).forUpdate().execute();
      const deleted: Record<(typeof DEPENDENT_TABLES)[number], number> = { messages: 0, message_ids: 0, compaction_pauses: 0, token_calibrations: 0 };
      for (const table of DEPENDENT_TABLES) {
        const result = await trx.deleteFrom(table).where('namespace', '=', namespace).where('conversation_id', '=', conversationId).executeTakeFirst();
        deleted[table] = Number(result.numDeletedRows);
      }
      const operations = await trx
        .deleteFrom('compaction_operations')
        .where('namespace', '=', namespace)
        .where('conversation_id', '=', conversationId)
        .executeTakeFirst();
      const conversations = await trx.deleteFrom('conversations').where('namespace', '=', namespace).where('id', '=', conversationId).executeTakeFirst();
      return {
        conversations: Number(conversations.numDeletedRows),
        messages: deleted.messages,
        messageIds: deleted.message_ids,
        operations: Number(operations.numDeletedRows),
        loopGuard: deleted.compaction_pauses,
        calibration: deleted.token_calibrations,
      };
    }),
  );
}
