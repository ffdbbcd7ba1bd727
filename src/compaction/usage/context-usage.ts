/**
 * A conversation's context against the settings (`Compactor.usage`, `memfold.usage`): its tokens as compaction
 * counts them, calibrated by the assistant's usage, and what the next automatic compaction would do, from the same
 * planner and loop guard `compact()` uses. Reads only.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import type { ConversationCounts } from './conversation-counts.js';
import type { CompactionSettings } from '../compaction-settings.js';
import { planTiers } from '../plan/plan-tiers.js';

/**
 * What the next automatic `compact()` would do (`Compactor.usage`): the planner's answer, and the loop guard's.
 * `clear_tool_outputs`: clear old tool outputs alone (tier 2, no summarizer call); `compact`: summarize (tier 3).
 */
export type NextCompaction = 'none' | 'clear_tool_outputs' | 'compact' | 'too_little_to_free' | 'nothing_to_compact' | 'paused';

/** A conversation's context against the settings: `Compactor.usage`, `memfold.usage`. */
export interface ContextUsage {
  conversationId: string;
  /**
   * The live history's tokens as compaction counts them (tool outputs whole, the clip-archive included), times
   * `calibration`.
   */
  tokens: number;
  /**
   * The factor the assistant's reported usage calibrated this conversation's counts by (`observeUsage`), from 1 to
   * 5; 1 before any observation and after each compaction.
   */
  calibration: number;
  contextWindow: number;
  /** tokens / contextWindow × 100, unrounded. */
  percent: number;
  /** Tokens at which compaction runs. */
  trigger: number;
  /** Tokens a compaction comes down to, about. */
  targetTokens: number;
  /** The share of the window at which `context_warning` fires (the setting). */
  warnAt: number;
  /** The same mark in tokens: floor(contextWindow × warnAt). */
  warnTokens: number;
  /**
   * `none`: under the trigger; `clear_tool_outputs`: it would clear old tool outputs and stop there (tier 2);
   * `compact`: it would summarize (tier 3); `too_little_to_free`, `nothing_to_compact`: it would skip for that
   * reason; `paused`: the loop guard has paused automatic compaction (a forced one still runs).
   */
  next: NextCompaction;
}

export interface ContextUsageDeps {
  settings: CompactionSettings;
  /** The `context_warning` mark in tokens. */
  warnTokens: number;
  /** Whether the loop guard pauses the conversation's automatic compaction (read only when a plan would run). */
  isPaused: () => Promise<boolean>;
}

export async function contextUsage(
  conversationId: string,
  history: readonly ConversationMessage[],
  counts: ConversationCounts,
  deps: ContextUsageDeps,
): Promise<ContextUsage> {
  const { settings } = deps;
  const outcome = planTiers(history, settings, counts.context, { factor: counts.factor });
  let next: NextCompaction;
  if (outcome.kind !== 'skip') next = (await deps.isPaused()) ? 'paused' : outcome.kind === 'clear' ? 'clear_tool_outputs' : 'compact';
  else next = outcome.reason === 'below_trigger' ? 'none' : outcome.reason;
  const { contextWindow, trigger, targetTokens, warnAt } = settings;
  const tokens = outcome.tokensBefore;
  return {
    conversationId,
    tokens,
    calibration: counts.factor,
    contextWindow,
    percent: (tokens / contextWindow) * 100,
    trigger,
    targetTokens,
    warnAt,
    warnTokens: deps.warnTokens,
    next,
  };
}
