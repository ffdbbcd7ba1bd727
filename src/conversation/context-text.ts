/** A context as readable text, pure: what `memfold context` prints and the MCP `context` tool answers. */
import type { ConversationMessage } from './types.js';

export function formatMessage(message: ConversationMessage): string {
  const who = message.kind === 'clip_archive' ? 'system (clip-archive)' : `${message.role}${message.name ? ` (${message.name})` : ''}`;
  const calls = (message.toolCalls ?? []).map((c) => `  -> ${c.function.name}(${c.function.arguments})`);
  const body = message.content ? [message.content] : [];
  return [`── ${who} · ${message.createdAt} ──`, ...body, ...calls].join('\n');
}

export function formatContext(messages: readonly ConversationMessage[]): string {
  return messages.map(formatMessage).join('\n\n');
}
