/**
 * The scope step of the planner, pure: with `sessionScope` set, move the start of the verbatim tail to a session
 * boundary (`sessions.ts`), or say why it stayed at the token cut.
 *
 * - `fixedCount`: the tail is the last `keepSessions` sessions, whatever `keepRecentTokens` and `keepRecentMessages`
 *   say, as long as the history then comes down under the trigger (system prompt, kept first turns, the clip-archive
 *   at its largest and those sessions); otherwise the token cut, inside them.
 * - `tokenBudget`: whole sessions are compacted, oldest first, until the rest fits the tail budget (the one the token
 *   cut uses); when not even the newest session fits it, the token cut.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import type { CompactionSettings, SessionScope } from '../compaction-settings.js';
import { sessionIdsOf, sessionSpans, type SessionSpan } from '../../conversation/sessions.js';

/** What the scope did to a plan: where the cut landed, and why. */
export interface ScopeOutcome {
  scope: Exclude<SessionScope, 'none'>;
  /** `session`: the tail starts at a session boundary; `tokens`: the scope fell back to the token cut. */
  cut: 'session' | 'tokens';
  /** Sessions the verbatim tail begins with whole or in part (after the kept first turns). */
  sessionsKept: number;
  /** Why the cut is where it is, in the settings' terms. */
  reason: string;
}

export interface ScopeInput {
  /** The body's sessions, in order. */
  sessions: readonly SessionSpan[];
  /** Tokens of the body's messages from index i to the end, for every i (length body + 1). */
  suffix: readonly number[];
  /** End of the kept first turns in the body. */
  firstEnd: number;
  /** The token cut's tail start. */
  tokenCut: number;
  /** The token cut's budget (`tailBudget`). */
  tailBudget: number;
  /** Tokens of the system prompt and the kept first turns, plus the clip-archive at its largest. */
  fixedTokens: number;
  settings: Pick<CompactionSettings, 'sessionScope' | 'keepSessions' | 'trigger'>;
}

/** Sessions of the tail starting at `tailStart` (the one it starts in counted whole). */
function sessionsFrom(sessions: readonly SessionSpan[], tailStart: number): number {
  return sessions.filter((s) => s.end > tailStart).length;
}

/** Where the tail starts under the scope; no outcome when no scope is set. */
export function scopeTail(input: ScopeInput): { tailStart: number; outcome?: ScopeOutcome } {
  const { sessions, suffix, firstEnd, tokenCut, settings } = input;
  const scope = settings.sessionScope;
  if (scope === 'none') return { tailStart: tokenCut };
  const cutAt = (tailStart: number, cut: ScopeOutcome['cut'], reason: string) => ({
    tailStart,
    outcome: { scope, cut, sessionsKept: sessionsFrom(sessions, tailStart), reason },
  });

  if (scope === 'fixedCount') {
    const n = settings.keepSessions;
    // The sessions may reach back into the kept first turns: the tail then starts after them.
    const start = Math.max(firstEnd, sessions[Math.max(0, sessions.length - n)]?.start ?? firstEnd);
    const after = input.fixedTokens + suffix[start]!;
    if (after < settings.trigger) return cutAt(start, 'session', `the last ${n} sessions are kept whole`);
    return cutAt(
      tokenCut,
      'tokens',
      `the last ${n} sessions (${suffix[start]} tokens) would leave the history at ${after} tokens, not under the trigger (${settings.trigger}): cut by tokens inside them`,
    );
  }
  // Only boundaries after the kept first turns can start the tail; the earliest that fits keeps the most.
  const starts = sessions.map((s) => s.start).filter((start) => start >= firstEnd);
  const fitting = starts.find((start) => suffix[start]! <= input.tailBudget);
  if (fitting !== undefined) return cutAt(fitting, 'session', `whole sessions are kept within the tail budget (${input.tailBudget} tokens)`);
  const newest = starts[starts.length - 1] ?? firstEnd;
  return cutAt(
    tokenCut,
    'tokens',
    `the newest session (${suffix[newest]} tokens) is larger than the tail budget (${input.tailBudget}): cut by tokens inside it`,
  );
}

export interface PlanSessionsInput {
  /** The history's body: no system prompt, no clip-archive. */
  body: readonly ConversationMessage[];
  bodyTokens: readonly number[];
  firstEnd: number;
  tokenCut: number;
  tailBudget: number;
  /** Tokens of the system prompt and the kept first turns, plus the clip-archive at its largest. */
  fixedTokens: number;
  settings: Pick<CompactionSettings, 'sessionScope' | 'keepSessions' | 'trigger' | 'sessionGapMinutes'>;
}

/** The planner's session step: the body's sessions, each message's session, and where the tail starts under the scope. */
export function planSessions(input: PlanSessionsInput): { tailStart: number; outcome?: ScopeOutcome; sessionOf: Map<string, string> } {
  const sessions = sessionSpans(input.body, input.settings.sessionGapMinutes);
  const ids = sessionIdsOf(sessions, input.body.length);
  const sessionOf = new Map(input.body.map((message, i) => [message.id, ids[i]!]));
  const suffix = new Array<number>(input.bodyTokens.length + 1).fill(0);
  for (let i = input.bodyTokens.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1]! + input.bodyTokens[i]!;
  return { ...scopeTail({ ...input, sessions, suffix }), sessionOf };
}
