/**
 * The one plan of a compaction, pure: the tier plan (plan-tiers.ts) and the chunks tier 3 will fold, made once before
 * the lock. Every step reads this value (the hooks, the early fold, tier 2, tier 3's fold and commit); none plans
 * again. Only a history that changed before the lock is planned anew, as a new input.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import type { CompactionDeps } from '../compaction-deps.js';
import { chunkCompactable, type ChunkedCompactable } from '../fold/fold-compactable.js';
import type { ConversationCounts } from '../usage/conversation-counts.js';
import type { SkipReason } from './plan.js';
import { planTiers, type RunnableTierPlan } from './plan-tiers.js';

export interface RunPlan {
  /** What each tier does. */
  tiers: RunnableTierPlan;
  /** The chunks tier 3 folds (undefined without tier 3): what its requests send, the early fold's included. */
  chunks: ChunkedCompactable | undefined;
}

export type RunPlanOutcome = { kind: 'skip'; reason: SkipReason; tokensBefore: number } | ({ kind: 'run' } & RunPlan);

export interface PlanRunInput {
  history: readonly ConversationMessage[];
  deps: Pick<CompactionDeps, 'settings' | 'tokens' | 'inputBudget' | 'stretchBudget'>;
  counts: ConversationCounts;
  force: boolean;
}

export function planRun({ history, deps, counts, force }: PlanRunInput): RunPlanOutcome {
  const tiers = planTiers(history, deps.settings, counts.context, { force, factor: counts.factor, ownCount: counts.message });
  if (tiers.kind === 'skip') return tiers;
  const chunks =
    tiers.kind === 'compact'
      ? chunkCompactable({ compactable: tiers.plan.compactable, recent: tiers.plan.recent, deps, contextCount: counts.context })
      : undefined;
  return { kind: 'run', tiers, chunks };
}
