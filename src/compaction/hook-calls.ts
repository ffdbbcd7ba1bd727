/**
 * The application's hooks around one compaction: `beforeCompact` asked about the plan about to run (its answer gives
 * the deps the compaction runs with, or cancels it), `afterCompact` told of the result.
 */
import { errorMessage } from '../errors.js';
import type { CompactionDeps } from './compaction-deps.js';
import { beforeCompactInfo, checkDecision, focusedSummarizer, suppliedSummarizer } from './compaction-hooks.js';
import { compactionSummary, type CompactionResult } from './compaction-result.js';
import type { CompactorContext } from './compactor-context.js';
import type { RunnableTierPlan } from './plan/plan-tiers.js';
import { atStage } from './stage-error.js';

export type HookAnswer = { cancel: true; reason?: string } | { cancel: false; callDeps: CompactionDeps; supplied: boolean };

export interface AskHooksInput {
  tiers: RunnableTierPlan;
  conversationId: string;
  force: boolean;
  focus: string | undefined;
}

/**
 * Ask `beforeCompact` about a plan about to run: the deps this compaction runs with (its focus, a supplied summary),
 * or the decision to cancel. A hook that throws or answers nonsense fails the compaction (`hook_failed`).
 */
export async function askHooks(ctx: CompactorContext, input: AskHooksInput): Promise<HookAnswer> {
  const { tiers, conversationId, force, focus } = input;
  const deps = ctx.depsFor(conversationId);
  const focused = focus === undefined ? deps : { ...deps, summarizer: focusedSummarizer(deps.summarizer, focus) };
  const before = ctx.options.hooks?.beforeCompact;
  if (!before) return { cancel: false, callDeps: focused, supplied: false };
  const { trigger, targetTokens } = deps.settings;
  const context = { conversationId, trigger, target: targetTokens, force, ...(focus !== undefined ? { focus } : {}) };
  const decision = await atStage('hook_failed', async () => checkDecision(await before(beforeCompactInfo(tiers, context))));
  if (decision.kind === 'cancel') return { cancel: true, ...(decision.reason !== undefined ? { reason: decision.reason } : {}) };
  if (decision.kind === 'run' || tiers.kind !== 'compact') return { cancel: false, callDeps: focused, supplied: false };
  const summarizer = suppliedSummarizer(focused.summarizer, decision.summary);
  return { cancel: false, callDeps: { ...focused, summarizer, summarySupplied: true }, supplied: true };
}

/** A compaction that started is reported once it has a result: `compaction_ended`, then `afterCompact`. */
export async function reportEnd(ctx: CompactorContext, conversationId: string, result: CompactionResult): Promise<void> {
  ctx.emit({ type: 'compaction_ended', conversationId, ...compactionSummary(result) });
  const after = ctx.options.hooks?.afterCompact;
  if (!after) return;
  try {
    await after(result);
  } catch (error) {
    ctx.emit({ type: 'hook_failed', conversationId, hook: 'afterCompact', error: errorMessage(error) });
  }
}
