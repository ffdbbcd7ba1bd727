/**
 * Turns and units. A turn is a user message and everything after it up to the next user message
 * (messages before the first user message form a turn of their own). A unit is the smallest run of
 * messages that may never be split: an assistant message with tool calls plus the tool results that
 * answer it, or any other single message.
 */
import type { ConversationMessage } from '../conversation/types.js';

type Msg = Pick<ConversationMessage, 'role' | 'toolCalls' | 'toolCallId'>;

/** Start indices of units, ascending. Tool results always join the unit of the call they answer. */
export function unitStarts(messages: readonly Msg[]): number[] {
  const starts: number[] = [];
  let open = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const answersOpenCall = message.role === 'tool' && (message.toolCallId === undefined || open.size > 0);
    if (answersOpenCall && starts.length > 0) {
      if (message.toolCallId !== undefined) open.delete(message.toolCallId);
      continue;
    }
    starts.push(i);
    open = new Set((message.toolCalls ?? []).map((call) => call.id));
  }
  return starts;
}

/** Start indices of turns, ascending; every turn start is also a unit start. */
export function turnStarts(messages: readonly Msg[]): number[] {
  const units = unitStarts(messages);
  const starts = units.filter((i) => i === 0 || messages[i]!.role === 'user');
  return starts;
}

/** Split messages at the given ascending start indices. */
export function splitAt<T>(items: readonly T[], starts: readonly number[]): T[][] {
  return starts.map((start, k) => items.slice(start, starts[k + 1] ?? items.length));
}
