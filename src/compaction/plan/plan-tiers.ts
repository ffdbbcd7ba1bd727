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
 * `clearingOf` and `planAfterClearing` say how a runnable tier plan runs; the run (run-tiers.ts) and the early fold
 * both use them, so both plan alike.
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
import type { ConversationCounts } from '../compaction-deps.js';
import type { CompactionSettings } from '../compaction-settings.js';
import { assembleContext } from '../view/context-view.js';
import { planCompaction, type CompactionPlan, type PlanOptions, type SkipReason } from './plan.js';

export type TierPlan =
  | { kind: 'skip'; reason: SkipReason; tokensBefore: number }
  /** Tier 2 alone. */
  | { kind: 'clear'; tokensBefore: number; clearing: ClearingSelection }
  /** Tier 3, after tier 2 when `clearing` holds outputs (`plan` was made on the history with them cleared, labels estimated). */
  | { kind: 'compact'; tokensBefore: number; clearing: ClearingSelection; plan: CompactionPlan };

export function planTiers(
  history: readonly ConversationMessage[],
  settings: CompactionSettings,
  countMessage: (message: ConversationMessage) => number,
  options: PlanOptions = {},
): TierPlan {
  const force = options.force ?? false;
  const tokensBefore = history.reduce((sum, m) => sum + countMessage(m), 0);
  if (!force && tokensBefore < settings.trigger) return { kind: 'skip', reason: 'below_trigger', tokensBefore };
  const clearing = selectToolOutputsToClear(history, settings, countMessage, { tokensBefore, stopAt: settings.targetTokens });
  if (clearing.outputs.length === 0) {
    const plan = planCompaction(history, settings, countMessage, options);
    return plan.kind === 'skip' ? plan : { kind: 'compact', tokensBefore, clearing: NO_CLEARING, plan };
  }
  if (tokensBefore - clearing.freed <= settings.targetTokens) return { kind: 'clear', tokensBefore, clearing };

  // Planned as forced: the trigger and the least freed are judged here, on both tiers together.
  const plan = planCompaction(withPlaceholders(history, clearing), settings, countMessage, { ...options, force: true });
  const atWindow = tokensBefore >= settings.contextWindow;
  const worth = (freed: number) => force || atWindow || freed >= settings.minFreedTokens;
  if (plan.kind === 'compact' && plan.expectedFreed > 0 && worth(plan.expectedFreed)) return { kind: 'compact', tokensBefore, clearing, plan };
  if (worth(clearing.freed)) return { kind: 'clear', tokensBefore, clearing };
  return { kind: 'skip', reason: 'too_little_to_free', tokensBefore };
}

export type RunnableTierPlan = Exclude<TierPlan, { kind: 'skip' }>;

/** Tier 2's selection as the tiers run it: `kept` is cleared first; `folded` is left to tier 3's transcript. */
export function clearingOf(tiers: RunnableTierPlan): { kept: ClearingSelection; folded: ClearingSelection } {
  if (tiers.kind !== 'compact') return { kept: tiers.clearing, folded: NO_CLEARING };
  return splitByFold(tiers.clearing, new Set(tiers.plan.compactable.map((m) => m.id)));
}

/**
 * Tier 3's plan on the rows tier 2 left (`cleared`, the live history with its placeholders), each output of `folded`
 * read as its fold placeholder: forced, since the tier plan already judged summarizing worth it. The early fold
 * predicts with it too, so both must plan alike.
 */
export function planAfterClearing(
  cleared: readonly ConversationMessage[],
  folded: ClearingSelection,
  settings: CompactionSettings,
  counts: Pick<ConversationCounts, 'context' | 'factor'>,
) {
  return planCompaction(assembleContext(withFoldedPlaceholders(cleared, folded)), settings, counts.context, { force: true, factor: counts.factor });
}
