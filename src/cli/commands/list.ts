/** `memfold list`: the namespace's conversations, most recently updated first. */
import type { ConversationListing, Memfold } from '../../memfold.js';
import { printJson, printStored, type Output } from '../output.js';

/** One line a conversation: id, live messages, last update; or a line saying there are none. Pure. */
export function formatConversationList(conversations: readonly ConversationListing[]): string {
  if (conversations.length === 0) return 'no conversations';
  const width = Math.max(...conversations.map((c) => c.id.length));
  return conversations.map((c) => `${c.id.padEnd(width)}  ${String(c.messageCount).padStart(6)} live messages  updated ${c.updatedAt}`).join('\n');
}

export async function runList(memfold: Memfold, options: { json: boolean }, output: Output): Promise<number> {
  const conversations = await memfold.listConversations();
  if (options.json) printJson(output, conversations);
  else printStored(output, formatConversationList(conversations));
  return 0;
}
