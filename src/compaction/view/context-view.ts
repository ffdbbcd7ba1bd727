/**
 * What the model sees, pure: system prompt, clip-archive, verbatim first turns, recent messages.
 * Tool outputs longer than toolOutputMaxLines are cut in this view only; the live row keeps the full
 * text (and the archive keeps it verbatim once the message is compacted).
 */
import type { ConversationMessage } from '../../conversation/types.js';
import { isClipArchive } from '../plan/plan.js';
import { pinnedUnitIds } from '../../conversation/pinned.js';

export function cutToolOutput(message: ConversationMessage, maxLines: number): ConversationMessage {
  if (message.role !== 'tool') return message;
  const lines = message.content.split('\n');
  if (lines.length <= maxLines) return message;
  const note = `[... ${lines.length - maxLines} more lines of this tool output cut from the context]`;
  return { ...message, content: [...lines.slice(0, maxLines), note].join('\n') };
}

/**
 * Order stored rows for the model: leading system messages, then the clip-archive, then the rest in
 * seq order, with tool outputs cut to `toolOutputMaxLines` when given (but those of pinned units).
 */
export function assembleContext(rows: readonly ConversationMessage[], toolOutputMaxLines?: number): ConversationMessage[] {
  const clip = rows.filter(isClipArchive);
  const rest = rows.filter((m) => !isClipArchive(m));
  let systemEnd = 0;
  while (systemEnd < rest.length && rest[systemEnd]!.role === 'system') systemEnd++;
  const body = rest.slice(systemEnd);
  // A pinned unit's outputs are shown whole: pinning says the model should keep reading them as they are.
  const pinned = pinnedUnitIds(body);
  const shown = toolOutputMaxLines === undefined ? body : body.map((m) => (pinned.has(m.id) ? m : cutToolOutput(m, toolOutputMaxLines)));
  return [...rest.slice(0, systemEnd), ...clip, ...shown];
}

/** What the continuation note says when `continuationMessage` is `true`. */
export const DEFAULT_CONTINUATION_MESSAGE =
  'The earlier part of this conversation was compacted: it is summarized in the memory archive above, and the memory_read tool searches or reads the archived messages word for word. Continue the task from where it stands, without asking the user again for what was already said.';

/**
 * The note `context()` ends with after a compaction (`compaction.continuationMessage`), until a user message comes
 * after the compaction's commit (`compactedThroughSeq` on the clip-archive row); none when the setting is off or no
 * compaction archived anything. Never stored: it carries the last row's seq and `kind: 'continuation'`.
 */
export function continuationNote(rows: readonly ConversationMessage[], setting: boolean | string): ConversationMessage | undefined {
  if (setting === false) return undefined;
  const clip = rows.find(isClipArchive);
  const through = clip?.compactedThroughSeq;
  if (clip === undefined || through === undefined) return undefined;
  if (rows.some((m) => m.role === 'user' && m.seq > through && m.compactedBy === undefined)) return undefined;
  return {
    id: `${clip.id}:continuation`,
    conversationId: clip.conversationId,
    seq: rows.reduce((last, m) => Math.max(last, m.seq), 0),
    role: 'system',
    content: setting === true ? DEFAULT_CONTINUATION_MESSAGE : setting,
    createdAt: clip.createdAt,
    kind: 'continuation',
  };
}

/** What the model should see: `assembleContext` with tool outputs cut, then the continuation note when one is due. */
export function modelContext(
  rows: readonly ConversationMessage[],
  settings: { toolOutputMaxLines: number; continuationMessage: boolean | string },
): ConversationMessage[] {
  const context = assembleContext(rows, settings.toolOutputMaxLines);
  const note = continuationNote(rows, settings.continuationMessage);
  return note === undefined ? context : [...context, note];
}
