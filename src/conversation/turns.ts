/**
 * Turns and units, the one place every planner reads them from. A turn is a user message and everything after it up
 * to the next user message (messages before the first user message form a turn of their own); what remains live of a
 * turn whose beginning was archived is a turn of its own. A unit is the smallest run of messages that may never be
 * split: an assistant message with tool calls plus the tool results that answer it, or any other single message.
 *
 * Where a turn's beginning was archived shows in the live history itself: append gives a conversation contiguous seqs,
 * and only archiving (or a caller's own deletion) takes rows out of the middle, so a message whose seq does not
 * follow the live message before it comes after archived ones. Without this, the live rest of a turn that a compaction
 * cut in two (a split turn) would join the turn before it: right after the kept first turn, it would be kept forever.
 */
import { toolGroupStarts } from './tool-groups.js';
import type { ConversationMessage } from './types.js';

type Msg = Pick<ConversationMessage, 'role' | 'toolCalls' | 'toolCallId'>;
type SeqMsg = Msg & Pick<ConversationMessage, 'seq'>;

/** Start indices of units, ascending: the tool groups of `conversation/tool-groups.ts`, so results stay with their call. */
export function unitStarts(messages: readonly Msg[]): number[] {
  return toolGroupStarts(messages);
}

/**
 * Whether the message at `index` comes after archived messages: its seq does not follow the seq before it, that of
 * the message before it or, for the first message, `previousSeq` (false when that is not given).
 */
export function followsArchived(messages: readonly Pick<ConversationMessage, 'seq'>[], index: number, previousSeq?: number): boolean {
  const before = index === 0 ? previousSeq : messages[index - 1]!.seq;
  return before !== undefined && messages[index]!.seq > before + 1;
}

/**
 * Start indices of turns, ascending: the first message, every user message, and every message that comes after
 * archived ones (`followsArchived`). Every turn start is also a unit start.
 */
export function turnStarts(messages: readonly SeqMsg[]): number[] {
  return unitStarts(messages).filter((i) => i === 0 || messages[i]!.role === 'user' || followsArchived(messages, i));
}

/**
 * Where the conversation's opening turns end in `messages` (a history's body: no system prompt, no clip-archive): after
 * `count` turns (the messages before the first user message belong to the first), and
 * never past archived messages, since what follows them is no longer the opening. 0 when `messages` does not begin
 * with the opening: its first message comes after archived ones (`previousSeq`: the seq of the live row before it).
 * Without `previousSeq` nothing was archived (no clip-archive): a hole between seqs is then the caller's own numbering,
 * and the opening turns are counted whole.
 */
export function openingEnd(messages: readonly SeqMsg[], count: number, previousSeq?: number): number {
  if (count === 0 || messages.length === 0 || followsArchived(messages, 0, previousSeq)) return 0;
  const turns = turnStarts(messages);
  // Counted by their user messages: the messages before the first one belong to the first turn.
  const userTurns = turns.filter((t) => messages[t]!.role === 'user');
  const afterArchived = previousSeq === undefined ? messages.length : (turns.find((t) => t > 0 && followsArchived(messages, t)) ?? messages.length);
  return Math.min(userTurns[count] ?? messages.length, afterArchived);
}

/** Split messages at the given ascending start indices. */
export function splitAt<T>(items: readonly T[], starts: readonly number[]): T[][] {
  return starts.map((start, k) => items.slice(start, starts[k + 1] ?? items.length));
}
