/**
 * One compaction of a tier plan (plan-tiers.ts), under the conversation's lock: tier 2 (run-clearing.ts) when it
 * clears any tool output, then tier 3 (run-compaction.ts) when the plan says summarizing is still worth it, on the
 * rows tier 2 left, as the one plan made before the lock cut them. Each tier is its own journaled operation, so a crash between them leaves tier 2
 * done and nothing else. Never throws.
 *
 * Tier 2 leaves to tier 3 the outputs tier 3 folds (`splitByFold`): its transcript segments archive them as appended,
 * and its summarizer reads a placeholder for each, as it would have read a cleared one. Clearing them first would
 * archive each twice and rewrite rows about to leave. Should tier 3 fail, they are cleared then, as tier 2 planned.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import type { ClearingSelection } from './clearing/clear-tool-outputs.js';
import type { StepContext } from './compaction-deps.js';
import type { CompactionResult } from './compaction-result.js';
import type { RunPlan } from './plan/plan-run.js';
import { withRows } from './plan/plan-tiers.js';
import { runClearing } from './clearing/run-clearing.js';
import { runCompaction } from './run-compaction.js';
import { assembleContext } from './view/context-view.js';

export interface RunTiersInput extends StepContext {
  /** The compaction's one plan (`plan/plan-run.ts`), made on `history`. */
  run: RunPlan;
  /** The history planned (for tier 2, the live rows read under the lock). */
  history: readonly ConversationMessage[];
}

/** Run the plan; `result` holds the history before and collects what each tier did. */
export async function runTiers(input: RunTiersInput): Promise<CompactionResult> {
  const { run, history, ...step } = input;
  const { tiers, chunks } = run;
  const { result } = step;
  if (tiers.clearing.outputs.length === 0) {
    if (tiers.kind !== 'compact' || !chunks) return result;
    const done = await runCompaction({ ...step, plan: tiers.plan, chunks });
    if (done.status === 'compacted') done.tier = 3;
    return done;
  }
  const { kept, folded } = tiers;
  let live: readonly ConversationMessage[] = history;
  let entries: ReadonlyMap<string, ArchiveEntry> | undefined;
  if (kept.outputs.length > 0) {
    const cleared = await clear({ ...step, selection: kept, history });
    if (!cleared) return result;
    live = cleared.history;
    entries = cleared.entries;
  }
  if (tiers.kind === 'clear' || !chunks) return result;

  // The plan stands on the rows tier 2 left: its first turns and tail are those rows as stored.
  const tier2 = { history: result.history, messagesAfter: result.messagesAfter, tokensAfter: result.tokensAfter, status: result.status };
  const uncleared = new Map(folded.outputs.map((o) => [o.message.id, o.message]));
  // The outputs tier 2 just archived and read back are not read again for their originals.
  const plan = withRows(tiers.plan, live);
  const done = await runCompaction({ ...step, plan, chunks, tier2: { ...(entries ? { entries } : {}), uncleared } });
  if (done.status === 'compacted') return Object.assign(done, { tier: 3 as const });

  // Summarizing failed and undid its writes: the outputs it was to fold are cleared now, as tier 2 planned.
  const why = { failureCode: done.failureCode, error: done.error, operationId: done.operationId, clientAttempts: done.clientAttempts };
  const late = folded.outputs.length > 0 && !step.signal?.aborted ? await clear({ ...step, selection: folded, history: live }) : undefined;
  if (!late && tier2.status !== 'compacted') return Object.assign(result, why, { status: 'failed' as const });
  if (!late) Object.assign(result, { history: tier2.history, messagesAfter: tier2.messagesAfter, tokensAfter: tier2.tokensAfter });
  // Tier 2 stands: the live rows changed, so the result says so, with why summarizing failed.
  return Object.assign(result, why, { status: 'compacted' as const, tier: 2 as const });
}

/** Clear `selection` from `history` (the live rows), adding to what `result` says tier 2 did; undefined when it failed. */
async function clear(input: StepContext & { selection: ClearingSelection; history: readonly ConversationMessage[] }) {
  const { result, deps, counts } = input;
  const cleared = await runClearing(input);
  if (!cleared.ok) {
    const { operationId, failureCode, error, clientAttempts } = cleared;
    Object.assign(result, { status: 'failed' as const, operationId, failureCode, error, ...(clientAttempts === undefined ? {} : { clientAttempts }) });
    return undefined;
  }
  const live = assembleContext(cleared.history);
  Object.assign(result, {
    status: 'compacted' as const,
    tier: 2 as const,
    operationId: cleared.operationId,
    clearingOperationId: cleared.operationId,
    toolOutputsCleared: (result.toolOutputsCleared ?? 0) + cleared.cleared,
    tokensFreedByClearing: (result.tokensFreedByClearing ?? 0) + cleared.tokensFreed,
    history: assembleContext(live, deps.settings.toolOutputMaxLines),
    messagesAfter: live.length,
    tokensAfter: live.reduce((sum, m) => sum + counts.context(m), 0),
  });
  return cleared;
}
