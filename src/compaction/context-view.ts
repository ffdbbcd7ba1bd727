/**
 * What the model sees, pure: system prompt, clip-archive, verbatim first turns, recent messages.
 * Tool outputs longer than toolOutputMaxLines are cut in this view only; the live row keeps the full
 * text (and the archive keeps it verbatim once the message is compacted).
 */
import type { ConversationMessage } from '../conversation/types.js';
import { isClipArchive } from './plan.js';

export function cutToolOutput(message: ConversationMessage, maxLines: number): ConversationMessage {
  if (message.role !== 'tool') return message;
  const lines = message.content.split('\n');
  if (lines.length <= maxLines) return message;
  const note = `[... ${lines.length - maxLines} more lines of this tool output cut from the context]`;
  return { ...message, content: [...lines.slice(0, maxLines), note].join('\n') };
}

/**
 * Order stored rows for the model: leading system messages, then the clip-archive, then the rest in
 * seq order, with tool outputs cut to `toolOutputMaxLines` when given.
 */
export function assembleContext(rows: readonly ConversationMessage[], toolOutputMaxLines?: number): ConversationMessage[] {
  const clip = rows.filter(isClipArchive);
  const rest = rows.filter((m) => !isClipArchive(m));
  let systemEnd = 0;
  while (systemEnd < rest.length && rest[systemEnd]!.role === 'system') systemEnd++;
  const body = rest.slice(systemEnd);
  const shown = toolOutputMaxLines === undefined ? body : body.map((m) => cutToolOutput(m, toolOutputMaxLines));
  return [...rest.slice(0, systemEnd), ...clip, ...shown];
}
