/**
 * One compaction of a tier plan (plan-tiers.ts), under the conversation's lock: tier 2 (run-clearing.ts) when it
 * clears any tool output, then tier 3 (run-compaction.ts) when the plan says summarizing is still worth it, planned
 * again on the rows tier 2 left. Each tier is its own journaled operation, so a crash between them leaves tier 2
 * done and nothing else. Never throws.
 */
import type { ConversationMessage } from '../conversation/types.js';
import type { CompactionSettings } from './compaction-settings.js';
import type { CompactionDeps, ConversationCounts } from './compaction-deps.js';
import type { CompactionResult } from './compaction-result.js';
import { assembleContext } from './context-view.js';
import { planCompaction } from './plan.js';
import type { TierPlan } from './plan-tiers.js';
import { runClearing } from './run-clearing.js';
import { runCompaction } from './run-compaction.js';

export type RunnableTierPlan = Exclude<TierPlan, { kind: 'skip' }>;

/**
 * Tier 3's plan on the rows tier 2 left (`cleared`, the live history with its placeholders): forced, since the tier
 * plan already judged summarizing worth it. The early fold predicts with it too, so both must plan alike.
 */
export function planAfterClearing(
  cleared: readonly ConversationMessage[],
  settings: CompactionSettings,
  counts: Pick<ConversationCounts, 'context' | 'factor'>,
) {
  return planCompaction(assembleContext(cleared), settings, counts.context, { force: true, factor: counts.factor });
}

/**
 * Run `tiers`, planned on `history` (for tier 2, the live rows read under the lock). `result` holds the history
 * before and collects what each tier did.
 */
export async function runTiers(
  tiers: RunnableTierPlan,
  history: readonly ConversationMessage[],
  conversationId: string,
  deps: CompactionDeps,
  result: CompactionResult,
  counts: ConversationCounts,
  signal?: AbortSignal,
): Promise<CompactionResult> {
  if (tiers.clearing.outputs.length === 0) {
    if (tiers.kind !== 'compact') return result;
    const done = await runCompaction(tiers.plan, conversationId, deps, result, counts, signal);
    if (done.status === 'compacted') done.tier = 3;
    return done;
  }

  const cleared = await runClearing(tiers.clearing, history, conversationId, deps, result, counts, signal);
  if (!cleared.ok)
    return Object.assign(result, { status: 'failed' as const, operationId: cleared.operationId, failureCode: cleared.failureCode, error: cleared.error });
  const live = assembleContext(cleared.history);
  Object.assign(result, {
    status: 'compacted' as const,
    tier: 2 as const,
    operationId: cleared.operationId,
    clearingOperationId: cleared.operationId,
    toolOutputsCleared: cleared.cleared,
    tokensFreedByClearing: cleared.tokensFreed,
    history: assembleContext(live, deps.settings.toolOutputMaxLines),
    messagesAfter: live.length,
    tokensAfter: live.reduce((sum, m) => sum + counts.context(m), 0),
  });
  if (tiers.kind === 'clear') return result;

  // Summarizing was judged worth it on the planned placeholders; the plan is made again on the rows as they are.
  const plan = planAfterClearing(live, deps.settings, counts);
  if (plan.kind === 'skip') return result;
  if (plan.scope) result.scope = plan.scope;
  const tier2 = { history: result.history, messagesAfter: result.messagesAfter, tokensAfter: result.tokensAfter };
  // The outputs tier 2 just archived and read back are not read again for their originals.
  const done = await runCompaction(plan, conversationId, deps, result, counts, signal, cleared.entries);
  if (done.status === 'compacted') return Object.assign(done, { tier: 3 as const });
  // Tier 2 stands: the live rows changed, so the result says so, with why summarizing failed.
  return Object.assign(done, { status: 'compacted' as const, tier: 2 as const, ...tier2 });
}
