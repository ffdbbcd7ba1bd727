/**
 * Step 1 and 2 of the pipeline, pure: decide whether to compact, and where to cut.
 * Returns a plan or `{ kind: 'skip', reason }`.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import { calibrated } from '../../tokens/usage-calibration.js';
import type { CompactionSettings } from '../compaction-settings.js';
import { planSessions, type ScopeOutcome } from './session-scope.js';
import { openingEnd, turnStarts, unitStarts } from '../../conversation/turns.js';
import { pinnedUnitIds } from '../../conversation/pinned.js';

export type SkipReason = 'below_trigger' | 'nothing_to_compact' | 'too_little_to_free';

export interface CompactionPlan {
  kind: 'compact';
  /** Leading system messages (the system prompt), kept as they are. */
  system: ConversationMessage[];
  /** The clip-archive this history carried, replaced by the new one. */
  previousClipArchive?: ConversationMessage;
  /** Opening turns kept verbatim. */
  firstTurns: ConversationMessage[];
  /** What the compaction archives and removes, in order: the messages between the first turns and the tail, less `pinned`. */
  compactable: ConversationMessage[];
  /**
   * The pinned units between the first turns and the tail (`conversation/pinned.ts`), in order: left live in their
   * places, as the first turns and the tail are.
   */
  pinned: ConversationMessage[];
  /** The verbatim tail. */
  recent: ConversationMessage[];
  tokensBefore: number;
  /** What the compaction is expected to free: the compactable messages and the old clip-archive, less the new one. */
  expectedFreed: number;
  /** The session of every message of the body, by message id (`sessions.ts`). */
  sessionOf: ReadonlyMap<string, string>;
  /** What the session scope did with the cut, when `sessionScope` is set. */
  scope?: ScopeOutcome;
}

export type PlanOutcome = CompactionPlan | { kind: 'skip'; reason: SkipReason; tokensBefore: number };

export function isClipArchive(message: Pick<ConversationMessage, 'kind'>): boolean {
  return message.kind === 'clip_archive';
}

/** Sum of the tokens of the messages from index `from` to the end, for every `from` (suffix sums). */
function suffixTokens(tokens: readonly number[]): number[] {
  const sums = new Array<number>(tokens.length + 1).fill(0);
  for (let i = tokens.length - 1; i >= 0; i--) sums[i] = sums[i + 1]! + tokens[i]!;
  return sums;
}

/**
 * Where the verbatim tail starts in `body`. Keeps at least `keepRecentMessages` messages and as much
 * more as fits in `keepRecentTokens` (the tail budget), then moves the cut to a turn boundary: forward when that still
 * keeps enough messages, back when the whole turn fits the budget, otherwise it stays on a unit
 * boundary inside the turn (a long agent turn is split, but never between a tool call and its result).
 */
export function findTailStart(
  body: readonly ConversationMessage[],
  tokens: readonly number[],
  settings: Pick<CompactionSettings, 'keepRecentTokens' | 'keepRecentMessages'>,
): number {
  const n = body.length;
  if (n === 0) return 0;
  const units = unitStarts(body);
  const turns = turnStarts(body);
  const suffix = suffixTokens(tokens);

  let byBudget = n;
  for (let k = units.length - 1; k >= 0; k--) {
    if (suffix[units[k]!]! > settings.keepRecentTokens) break;
    byBudget = units[k]!;
  }
  const floorIndex = Math.max(0, n - settings.keepRecentMessages);
  const byCount = [...units].reverse().find((u) => u <= floorIndex) ?? 0;
  const start = Math.min(byBudget, byCount);

  if (turns.includes(start)) return start;
  const nextTurn = turns.find((t) => t > start);
  if (nextTurn !== undefined && n - nextTurn >= settings.keepRecentMessages) return nextTurn;
  const turnStart = [...turns].reverse().find((t) => t <= start) ?? 0;
  if (suffix[turnStart]! <= settings.keepRecentTokens) return turnStart;
  return start;
}

/**
 * Where the verbatim opening ends: after `keepFirstTurns` turns of the conversation's opening (`openingEnd`: none
 * when the body begins after archived messages, `previousSeq` being the seq of the row before it), shrunk to whole
 * units within a quarter of the trigger so that a huge opening turn cannot fill the window on its own.
 */
export function findFirstTurnsEnd(body: readonly ConversationMessage[], tokens: readonly number[], settings: CompactionSettings, previousSeq?: number): number {
  const end = openingEnd(body, settings.keepFirstTurns, previousSeq);
  if (end === 0) return 0;
  const cap = Math.floor(settings.trigger / 4);
  let used = 0;
  let fits = 0;
  const units = unitStarts(body).filter((u) => u < end);
  for (let k = 0; k < units.length; k++) {
    const unitEnd = units[k + 1] ?? end;
    for (let i = units[k]!; i < unitEnd; i++) used += tokens[i]!;
    if (used > cap) break;
    fits = unitEnd;
  }
  return fits;
}

/** The clip-archive at its largest: the first and last batches it shows, each at its largest. */
export function clipArchiveBound(settings: CompactionSettings): number {
  return (settings.clipFirst + settings.clipLast) * settings.maxSummaryTokens;
}

/**
 * The tail budget that brings the history down to `targetTokens`: what the target leaves after the system
 * prompt, the opening turns and the clip-archive at its largest, never more than `keepRecentTokens`.
 */
export function tailBudget(settings: CompactionSettings, keptTokens: number, clipTokens = clipArchiveBound(settings)): number {
  return Math.max(0, Math.min(settings.keepRecentTokens, settings.targetTokens - keptTokens - clipTokens));
}

export interface PlanOptions {
  /** Plan even below the trigger (and whatever it frees). Default false. */
  force?: boolean;
  /**
   * The calibration factor `countMessage` counts with (`observeUsage`), so the clip-archive's bound, in memfold's own
   * tokens, is counted as the messages are. Default 1.
   */
  factor?: number;
}

export function planCompaction(
  history: readonly ConversationMessage[],
  settings: CompactionSettings,
  countMessage: (message: ConversationMessage) => number,
  options: PlanOptions = {},
): PlanOutcome {
  const tokens = history.map(countMessage);
  // The clip-archive's bound is in memfold's own tokens; the messages are counted calibrated (`countMessage`).
  const factor = options.factor ?? 1;
  const clipBound = calibrated(clipArchiveBound(settings), factor);
  const tokensBefore = tokens.reduce((a, b) => a + b, 0);
  if (!options.force && tokensBefore < settings.trigger) return { kind: 'skip', reason: 'below_trigger', tokensBefore };

  const system: ConversationMessage[] = [];
  let previousClipArchive: ConversationMessage | undefined;
  let previousClipTokens = 0;
  let systemTokens = 0;
  const body: ConversationMessage[] = [];
  const bodyTokens: number[] = [];
  history.forEach((message, i) => {
    if (isClipArchive(message)) {
      previousClipArchive = message;
      previousClipTokens = tokens[i]!;
    } else if (message.role === 'system' && body.length === 0) {
      system.push(message);
      systemTokens += tokens[i]!;
    } else {
      body.push(message);
      bodyTokens.push(tokens[i]!);
    }
  });

  // Only a history that carries a clip-archive had messages archived: then a body that follows neither the system
  // prompt's seq nor the seq before the conversation's opening (`openingSeq`, past an erase that kept messages) begins
  // after archived ones. (A history a caller built may number its messages from anywhere.)
  const previousSeq = previousClipArchive ? Math.max(system.at(-1)?.seq ?? 0, (previousClipArchive.openingSeq ?? 1) - 1) : undefined;
  const firstEnd = findFirstTurnsEnd(body, bodyTokens, settings, previousSeq);
  const sum = (from: number, to: number) => bodyTokens.slice(from, to).reduce((a, b) => a + b, 0);
  // Pinned units after the first turns stay live wherever the cut falls: counted with what the compaction keeps.
  const pinnedIds = pinnedUnitIds(body);
  const pinnedTokens = body.reduce((total, m, i) => (i >= firstEnd && pinnedIds.has(m.id) ? total + bodyTokens[i]! : total), 0);
  const keptTokens = systemTokens + sum(0, firstEnd) + pinnedTokens;
  const keepRecentTokens = tailBudget(settings, keptTokens, clipBound);
  const tokenCut = Math.max(firstEnd, findTailStart(body, bodyTokens, { keepRecentTokens, keepRecentMessages: settings.keepRecentMessages }));
  const fixedTokens = keptTokens + clipBound;
  const sessions = planSessions({ body, bodyTokens, firstEnd, tokenCut, tailBudget: keepRecentTokens, fixedTokens, settings });
  const tailStart = sessions.tailStart;
  const middle = body.slice(firstEnd, tailStart);
  const compactable = middle.filter((m) => !pinnedIds.has(m.id));
  if (compactable.length === 0) return { kind: 'skip', reason: 'nothing_to_compact', tokensBefore };

  // The new clip-archive holds one more batch or so than the old one, up to its largest.
  const newClipTokens = Math.min(clipBound, previousClipTokens + calibrated(settings.maxSummaryTokens, factor));
  const middlePinned = middle.reduce((total, m, i) => (pinnedIds.has(m.id) ? total + bodyTokens[firstEnd + i]! : total), 0);
  const expectedFreed = sum(firstEnd, tailStart) - middlePinned + previousClipTokens - newClipTokens;
  // Too small a step only moves the next compaction closer; at the window itself any step is worth taking.
  if (!options.force && expectedFreed < settings.minFreedTokens && tokensBefore < settings.contextWindow) {
    return { kind: 'skip', reason: 'too_little_to_free', tokensBefore };
  }

  const plan: CompactionPlan = {
    kind: 'compact',
    system,
    firstTurns: body.slice(0, firstEnd),
    compactable,
    pinned: middle.filter((m) => pinnedIds.has(m.id)),
    recent: body.slice(tailStart),
    tokensBefore,
    expectedFreed,
    sessionOf: sessions.sessionOf,
  };
  if (previousClipArchive) plan.previousClipArchive = previousClipArchive;
  if (sessions.outcome) plan.scope = sessions.outcome;
  return plan;
}
