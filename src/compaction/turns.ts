/**
 * Turns and units. A turn is a user message and everything after it up to the next user message
 * (messages before the first user message form a turn of their own). A unit is the smallest run of
 * messages that may never be split: an assistant message with tool calls plus the tool results that
 * answer it, or any other single message.
 */
import { toolGroupStarts } from '../conversation/tool-groups.js';
import type { ConversationMessage } from '../conversation/types.js';

type Msg = Pick<ConversationMessage, 'role' | 'toolCalls' | 'toolCallId'>;

/** Start indices of units, ascending: the tool groups of `conversation/tool-groups.ts`, so results stay with their call. */
export function unitStarts(messages: readonly Msg[]): number[] {
  return toolGroupStarts(messages);
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
