/**
 * Pinned messages, pure. A pin keeps its whole unit live (`turns.ts`: an assistant tool call and the results that
 * answer it), so a pinned call keeps its results and a pinned result its call: a compaction never splits a pair.
 */
import { unitStarts } from './turns.js';
import type { ConversationMessage } from './types.js';

type Msg = Pick<ConversationMessage, 'id' | 'role' | 'toolCalls' | 'toolCallId' | 'pinned'>;

/** Ids of every message of `messages` in a unit that holds a pinned message. */
export function pinnedUnitIds(messages: readonly Msg[]): Set<string> {
  const ids = new Set<string>();
  if (!messages.some((m) => m.pinned === true)) return ids;
  const starts = unitStarts(messages);
  starts.forEach((start, k) => {
    const unit = messages.slice(start, starts[k + 1] ?? messages.length);
    if (unit.some((m) => m.pinned === true)) for (const m of unit) ids.add(m.id);
  });
  return ids;
}
