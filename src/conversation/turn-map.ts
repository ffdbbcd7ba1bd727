/**
 * The turn map: which messages each turn holds. A turn is a user message and everything after it up to the next
 * user message (messages before the first user message form a turn of their own, `opensWithUser: false`); what
 * remains live of a turn whose beginning was archived is a turn of its own too (`opensWithUser: false`: its seq does
 * not follow the message before it); a tool result always stays in the turn of its call (`turns.ts`). Pure.
 */
import type { ConversationMessage } from './types.js';
import { turnStarts } from './turns.js';

type TurnMessage = Pick<ConversationMessage, 'role' | 'toolCalls' | 'toolCallId' | 'seq'>;

/** One turn: a range of the messages the map was built from. */
export interface TurnSpan {
  /** Position of the turn, from 0. */
  turn: number;
  /** Index of its first message in the array the map was built from. */
  start: number;
  /** Index after its last message (exclusive). */
  end: number;
  /** Seqs of its first and last message. */
  firstSeq: number;
  lastSeq: number;
  /** False for messages before the first user message and for the live rest of a turn whose beginning was archived. */
  opensWithUser: boolean;
}

/** The turns of `messages` (a conversation in seq order, e.g. `history()` without its system rows), in order. */
export function turnMap(messages: readonly TurnMessage[]): TurnSpan[] {
  const starts = turnStarts(messages);
  return starts.map((start, turn) => {
    const end = starts[turn + 1] ?? messages.length;
    return { turn, start, end, firstSeq: messages[start]!.seq, lastSeq: messages[end - 1]!.seq, opensWithUser: messages[start]!.role === 'user' };
  });
}

/** The turn holding the message at `index`, or undefined when the index is outside the map. */
export function turnAt(map: readonly TurnSpan[], index: number): TurnSpan | undefined {
  let low = 0;
  let high = map.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const span = map[mid]!;
    if (index < span.start) high = mid - 1;
    else if (index >= span.end) low = mid + 1;
    else return span;
  }
  return undefined;
}
