/** Erasing a conversation from in-memory tables (`kysely/kysely-erase.ts`'s twin): every row of it, at once. */
import { requireText } from '../../conversation/text.js';
import type { ConversationErasure } from '../persistence-provider.js';
import { conversationKey, type InMemoryTables } from './in-memory-tables.js';

/** Delete the conversation's record (messages, id ledger, loop guard, calibration) and every operation of it. */
export function eraseConversation(tables: InMemoryTables, namespace: string, conversationId: string): ConversationErasure {
  requireText(conversationId, 'conversationId');
  const key = conversationKey(namespace, conversationId);
  const record = tables.conversations.get(key);
  let operations = 0;
  for (const [id, entry] of tables.operations) {
    if (entry.namespace !== namespace || entry.operation.conversationId !== conversationId) continue;
    tables.operations.delete(id);
    operations++;
  }
  tables.conversations.delete(key);
  return {
    conversations: record ? 1 : 0,
    messages: record?.messages.length ?? 0,
    messageIds: record?.usedIds.size ?? 0,
    operations,
    loopGuard: record?.loopGuard ? 1 : 0,
    calibration: record?.calibration ? 1 : 0,
  };
}
