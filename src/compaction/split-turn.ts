/**
 * Split turns, pure. When one turn is larger than the verbatim tail may keep, the planner cuts it at a unit
 * boundary: the turn's later messages stay live, its opening is compacted. That opening (the turn prefix) is
 * summarized on its own, concurrently with the history before it, so that its summary says what the turn in
 * progress asked and has done so far instead of being folded into the older history's summary.
 */
import type { ConversationMessage } from '../conversation/types.js';

export interface SplitCompactable<T> {
  /** The compactable messages before the turn in progress: folded from the previous summary on. */
  history: T[];
  /** The compactable opening of the turn the verbatim tail continues; empty when the tail starts a turn. */
  turnPrefix: T[];
}

type Msg = Pick<ConversationMessage, 'role'>;

/**
 * Separate the opening of a split turn from the rest of the compactable messages. The tail starts mid-turn when
 * its first message is not a user message (the planner cuts only at unit boundaries); the turn then opens at the
 * last user message compacted, or before the compactable messages began (all of them are its prefix). Only a
 * turn larger than `longTurnTokens` (the tail the settings keep) counts as split: the tail's count floor also
 * starts it mid-turn in a short exchange, and a question of a few words is better folded with the history
 * than summarized in a request of its own.
 */
export function splitTurnPrefix<T extends Msg>(
  compactable: readonly T[],
  recent: readonly T[],
  countMessage: (message: T) => number,
  longTurnTokens: number,
): SplitCompactable<T> {
  const whole: SplitCompactable<T> = { history: [...compactable], turnPrefix: [] };
  if (recent.length === 0 || recent[0]!.role === 'user' || compactable.length === 0) return whole;
  const start = Math.max(
    0,
    compactable.findLastIndex((m) => m.role === 'user'),
  );
  const turnEnd = recent.findIndex((m) => m.role === 'user');
  const turn = [...compactable.slice(start), ...recent.slice(0, turnEnd < 0 ? recent.length : turnEnd)];
  if (turn.reduce((sum, m) => sum + countMessage(m), 0) <= longTurnTokens) return whole;
  return { history: compactable.slice(0, start), turnPrefix: compactable.slice(start) };
}
