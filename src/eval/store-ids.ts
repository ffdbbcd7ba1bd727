/**
 * Ids in the evaluation store. One store serves every window, so a conversation is stored once per
 * window; message ids are opaque positions, so no turn id (and so no evidence) reaches what memfold sees.
 */
import type { NewMessage } from '../conversation/types.js';

export function storeConversationId(conversationId: string, window: number): string {
  return `${conversationId}@${window}`;
}

export function withStoreIds(storeId: string, messages: readonly NewMessage[]): NewMessage[] {
  return messages.map((m, i) => ({ ...m, id: `${storeId}/${i}` }));
}
