/** Erasing a conversation from in-memory tables (`kysely/kysely-erase.ts`'s twin): every row of it (up to a boundary), at once. */
import { requireText } from '../../conversation/text.js';
import { requireEraseBoundary } from '../erase-boundary.js';
import type { ConversationErasure, EraseConversationOptions } from '../persistence-provider.js';
import { conversationKey, type InMemoryTables } from './in-memory-tables.js';

/**
 * Delete the conversation's record (messages, id ledger, loop guard, calibration) and every operation of it; with
 * `throughSeq`, messages after it stay, with their ledger entries and the record (its seqs go on), except tool results
 * answering a call at or below it (a tool group is never split).
 */
export function eraseConversation(
  tables: InMemoryTables,
  namespace: string,
  conversationId: string,
  options: EraseConversationOptions = {},
): ConversationErasure {
  requireText(conversationId, 'conversationId');
  const throughSeq = requireEraseBoundary(options.throughSeq);
  const key = conversationKey(namespace, conversationId);
  const record = tables.conversations.get(key);
  let operations = 0;
  for (const [id, entry] of tables.operations) {
    if (entry.namespace !== namespace || entry.operation.conversationId !== conversationId) continue;
    tables.operations.delete(id);
    operations++;
  }
  if (record === undefined) return { conversations: 0, messages: 0, messagesKept: 0, messageIds: 0, operations, loopGuard: 0, calibration: 0 };
  const later = throughSeq === undefined ? [] : record.messages.filter((m) => m.seq > throughSeq).sort((a, b) => a.seq - b.seq);
  // Tool results ahead of every other message kept answer a call the erase removed: they go with their call.
  const firstOther = later.findIndex((m) => m.role !== 'tool');
  const kept = firstOther < 0 ? [] : later.slice(firstOther);
  const keptIds = new Set(kept.map((m) => m.id));
  const erasure: ConversationErasure = {
    conversations: kept.length > 0 ? 0 : 1,
    messages: record.messages.length - kept.length,
    messagesKept: kept.length,
    messageIds: [...record.usedIds.keys()].filter((id) => !keptIds.has(id)).length,
    operations,
    loopGuard: record.loopGuard ? 1 : 0,
    calibration: record.calibration ? 1 : 0,
  };
  if (kept.length === 0) {
    tables.conversations.delete(key);
    return erasure;
  }
  record.messages = kept;
  record.usedIds = new Map([...record.usedIds].filter(([id]) => keptIds.has(id)));
  delete record.loopGuard;
  delete record.calibration;
  return erasure;
}
