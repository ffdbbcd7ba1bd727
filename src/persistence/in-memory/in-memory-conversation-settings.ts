/** Each conversation's settings overrides over in-memory tables (`kysely/kysely-conversation-settings.ts`'s twin). */
import { requireConversationId } from '../../conversation/conversation-id.js';
import { checkConversationSettings } from '../conversation-settings-input.js';
import type { ConversationSettingsRecord } from '../persistence-provider.js';
import { conversationKey, copyOf, type InMemoryTables } from './in-memory-tables.js';

export function getConversationSettings(tables: InMemoryTables, namespace: string, conversationId: string): ConversationSettingsRecord | undefined {
  const record = tables.settings.get(conversationKey(namespace, requireConversationId(conversationId)));
  return record === undefined ? undefined : copyOf(record);
}

export function setConversationSettings(
  tables: InMemoryTables,
  namespace: string,
  conversationId: string,
  input: Record<string, unknown>,
  now: string,
): ConversationSettingsRecord {
  const { conversationId: id, settings } = checkConversationSettings(conversationId, input);
  const record = { settings, updatedAt: now };
  tables.settings.set(conversationKey(namespace, id), record);
  return copyOf(record);
}

export function clearConversationSettings(tables: InMemoryTables, namespace: string, conversationId: string): boolean {
  return tables.settings.delete(conversationKey(namespace, requireConversationId(conversationId)));
}
