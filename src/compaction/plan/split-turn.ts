/**
 * Split turns, pure. When one turn is larger than the verbatim tail may keep, the planner cuts it at a unit
 * boundary: the turn's later messages stay live, its opening is compacted. That opening (the turn prefix) is
 * summarized on its own, concurrently with the history before it, so that its summary says what the turn in
 * progress asked and has done so far instead of being folded into the older history's summary.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import { turnStarts } from '../../conversation/turns.js';

export interface SplitCompactable<T> {
  /** The compactable messages before the turn in progress: folded from the previous summary on. */
  history: T[];
  /** The compactable opening of the turn the verbatim tail continues; empty when the tail starts a turn. */
  turnPrefix: T[];
}

type Msg = Pick<ConversationMessage, 'role' | 'toolCalls' | 'toolCallId' | 'seq'>;

/**
 * Separate the opening of a split turn from the rest of the compactable messages. The tail starts mid-turn when
 * its first message starts no turn (`turns.ts`: the planner cuts only at unit boundaries); the turn then opens at the
 * last turn start among the compactable messages, or before they began (all of them are its prefix). Only a turn
 * larger than `longTurnTokens` (the tail the settings keep) counts as split: the tail's count floor also starts it
 * mid-turn in a short exchange, and a question of a few words is better folded with the history than summarized in a
 * request of its own.
 */
export function splitTurnPrefix<T extends Msg>(
  compactable: readonly T[],
  recent: readonly T[],
  countMessage: (message: T) => number,
  longTurnTokens: number,
): SplitCompactable<T> {
  const whole: SplitCompactable<T> = { history: [...compactable], turnPrefix: [] };
  if (recent.length === 0 || compactable.length === 0) return whole;
  const messages = [...compactable, ...recent];
  const turns = turnStarts(messages);
  const cut = compactable.length;
  if (turns.includes(cut)) return whole;
  const start = turns.findLast((t) => t < cut) ?? 0;
  const end = turns.find((t) => t > cut) ?? messages.length;
  const turn = messages.slice(start, end);
  if (turn.reduce((sum, m) => sum + countMessage(m), 0) <= longTurnTokens) return whole;
  return { history: compactable.slice(0, start), turnPrefix: compactable.slice(start) };
}
