/**
 * Which tier resolves a compaction, pure. Tier 1 (tool outputs cut in the view) always applies and frees nothing in
 * the live rows. Once the history is at or over the trigger (or forced):
 * - tier 2 clears old tool outputs, oldest first, until the history is at or under `targetTokens`; when that gets
 *   there, it is all that runs (no summarizer call);
 * - otherwise tier 3 summarizes as planned on the history tier 2 leaves (`planCompaction`), when that frees at
 *   least `minFreedTokens` more (or is forced, or the history has reached the window);
 * - otherwise tier 2 alone runs when it frees at least `minFreedTokens` (or is forced, or at the window), since
 *   summarizing would free too little to be worth a summary; else nothing runs (`too_little_to_free`).
 * With tier 2 off or nothing to clear, this is `planCompaction` itself.
 * The one plan of a compaction: tier 3's cut is made once, on the history as tier 2 leaves it (each output under the
 * label its clearing will choose when none is taken), and the run, the early fold and the hooks read it as it is.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import {
  NO_CLEARING,
  selectToolOutputsToClear,
  splitByFold,
  withFoldedPlaceholders,
  withPlaceholders,
  type ClearingSelection,
} from '../clearing/clear-tool-outputs.js';
import type { CompactionSettings } from '../compaction-settings.js';
import { planCompaction, type CompactionPlan, type PlanOptions, type SkipReason } from './plan.js';

export type TierPlan =
  | { kind: 'skip'; reason: SkipReason; tokensBefore: number }
  /** Tier 2 alone: `kept` is `clearing`, `folded` empty. */
  | { kind: 'clear'; tokensBefore: number; clearing: ClearingSelection; kept: ClearingSelection; folded: ClearingSelection }
  /**
   * Tier 3, after tier 2 when `kept` holds outputs. `clearing` splits into `kept` (cleared first) and `folded` (left
   * to tier 3's transcript, `splitByFold`). `plan` was made on the history with every output of `clearing` cleared:
   * its compactable messages read each output of `folded` as its fold placeholder (what the summarizer reads), its
   * first turns and tail each output of `kept` as its clearing will store it, labels as chosen when none is taken
   * (the run puts the rows as stored in their place, `withRows`).
   */
  | { kind: 'compact'; tokensBefore: number; clearing: ClearingSelection; kept: ClearingSelection; folded: ClearingSelection; plan: CompactionPlan };

export interface TierPlanOptions extends PlanOptions {
  /** memfold's own count of a message, which names a placeholder's tokens (the clearing's). Default `countMessage`. */
  ownCount?: (message: ConversationMessage) => number;
}

export function planTiers(
  history: readonly ConversationMessage[],
  settings: CompactionSettings,
  countMessage: (message: ConversationMessage) => number,
  options: TierPlanOptions = {},
): TierPlan {
  const { ownCount = countMessage, ...planOptions } = options;
  const force = options.force ?? false;
  const tokensBefore = history.reduce((sum, m) => sum + countMessage(m), 0);
  if (!force && tokensBefore < settings.trigger) return { kind: 'skip', reason: 'below_trigger', tokensBefore };
  const clearing = selectToolOutputsToClear(history, settings, countMessage, { tokensBefore, stopAt: settings.targetTokens });
  if (clearing.outputs.length === 0) {
    const plan = planCompaction(history, settings, countMessage, planOptions);
    return plan.kind === 'skip' ? plan : { kind: 'compact', tokensBefore, clearing: NO_CLEARING, kept: NO_CLEARING, folded: NO_CLEARING, plan };
  }
  const clearOnly = { kind: 'clear' as const, tokensBefore, clearing, kept: clearing, folded: NO_CLEARING };
  if (tokensBefore - clearing.freed <= settings.targetTokens) return clearOnly;

  // Planned as forced: the trigger and the least freed are judged here, on both tiers together.
  const plan = planCompaction(withPlaceholders(history, clearing, ownCount), settings, countMessage, { ...planOptions, force: true });
  const atWindow = tokensBefore >= settings.contextWindow;
  const worth = (freed: number) => force || atWindow || freed >= settings.minFreedTokens;
  if (plan.kind === 'compact' && plan.expectedFreed > 0 && worth(plan.expectedFreed)) {
    const { kept, folded } = splitByFold(clearing, new Set(plan.compactable.map((m) => m.id)));
    // The outputs tier 3 folds are never cleared: the summarizer reads each, uncleared, as its fold placeholder.
    const original = new Map(folded.outputs.map((o) => [o.message.id, o.message]));
    const compactable = withFoldedPlaceholders(
      plan.compactable.map((m) => original.get(m.id) ?? m),
      folded,
    );
    return { kind: 'compact', tokensBefore, clearing, kept, folded, plan: { ...plan, compactable } };
  }
  if (worth(clearing.freed)) return clearOnly;
  return { kind: 'skip', reason: 'too_little_to_free', tokensBefore };
}

export type RunnableTierPlan = Exclude<TierPlan, { kind: 'skip' }>;

/**
 * `plan` with its first turns, pinned units and tail read from `rows` (the live rows once tier 2 committed, by id): the plan stands,
 * and what the compaction leaves live is the rows as stored. Its compactable messages stay as the summarizer reads them.
 */
export function withRows(plan: CompactionPlan, rows: readonly ConversationMessage[]): CompactionPlan {
  const byId = new Map(rows.map((m) => [m.id, m]));
  const stored = (messages: readonly ConversationMessage[]) => messages.map((m) => byId.get(m.id) ?? m);
  return { ...plan, firstTurns: stored(plan.firstTurns), pinned: stored(plan.pinned), recent: stored(plan.recent) };
}
