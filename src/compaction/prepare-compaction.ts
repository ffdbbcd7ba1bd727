/**
 * Before the lock: a validated history planned once (`plan/plan-run.ts`), then a skip (below the trigger, nothing to
 * compact, paused) or the run to make. The plan's time goes to the result's `stageMs.plan`.
 */
import type { ConversationMessage } from '../conversation/types.js';
import { initialResult, type CompactionResult } from './compaction-result.js';
import { guardQuietly, type CompactorContext } from './compactor-context.js';
import { planRun, type RunPlan } from './plan/plan-run.js';
import type { ConversationCounts } from './usage/conversation-counts.js';

export type Prepared =
  | { kind: 'run'; run: RunPlan; history: readonly ConversationMessage[]; counts: ConversationCounts; result: CompactionResult }
  | { kind: 'skip'; result: CompactionResult };

export interface PrepareInput {
  history: readonly ConversationMessage[];
  conversationId: string;
  counts: ConversationCounts;
  force: boolean;
}

export async function prepare(ctx: CompactorContext, input: PrepareInput): Promise<Prepared> {
  const { history, conversationId, counts, force } = input;
  const started = ctx.clock();
  const planned = planRun({ history, deps: ctx.depsFor(conversationId), counts, force });
  const planMs = ctx.clock() - started;
  const tokensBefore = planned.kind === 'skip' ? planned.tokensBefore : planned.tiers.tokensBefore;
  const result = initialResult(history, tokensBefore);
  result.stageMs.plan = planMs;
  ctx.warnings.observe(conversationId, tokensBefore, lastSeqOf(history), counts.factor);
  if (planned.kind === 'skip') {
    if (planned.reason === 'below_trigger') await guardQuietly(ctx, conversationId, () => ctx.guard.underTrigger(conversationId));
    return { kind: 'skip', result: Object.assign(result, { skipReason: planned.reason }) };
  }
  if (!force && (await ctx.guard.isPaused(conversationId))) return { kind: 'skip', result: Object.assign(result, { skipReason: 'paused' as const }) };
  const { tiers, chunks } = planned;
  if (tiers.kind === 'compact' && tiers.plan.scope) result.scope = tiers.plan.scope;
  return { kind: 'run', run: { tiers, chunks }, history, counts, result };
}

/** The highest seq of a history (0 when it holds none but the clip-archive). */
function lastSeqOf(history: readonly ConversationMessage[]): number {
  return history.reduce((last, message) => Math.max(last, message.seq), 0);
}

/**
 * Whether the live rows are still those `history` was read from: every message of it live, and the same number of
 * them cleared (tier 2's placeholder is the only change a live row takes in place; rows appended since do not count).
 */
export async function stillLive(ctx: CompactorContext, conversationId: string, history: readonly ConversationMessage[]): Promise<boolean> {
  const { persistence } = ctx.options;
  const ids = history.map((m) => m.id);
  const cleared = history.filter((m) => m.clearedOutputLabel !== undefined).length;
  // One lookup for both counts: at 100k messages each statement sends every id.
  const counts = await persistence.countLiveAndCleared(conversationId, ids);
  return counts.live === ids.length && counts.cleared === cleared;
}
