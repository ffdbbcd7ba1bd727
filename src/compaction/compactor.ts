/**
 * The compactor: the entries callers use. `compactStored` (what `memfold.compact` calls) reads the live rows
 * and compacts them as `compactHistory` does a history the caller hands in (compact-history.ts): planned once
 * before the lock (a skip takes no lock), then, under the conversation's lock, reconciled and checked against the
 * live rows. Neither entry throws: every failure comes back as a result, after undoing what was written.
 */
import { requireConversationId } from '../conversation/conversation-id.js';
import type { ConversationMessage } from '../conversation/types.js';
import { checkDurationMs } from '../duration-ms.js';
import { InvalidArgumentError, MemfoldError, errorMessage } from '../errors.js';
import { initialResult, type CompactionResult } from './compaction-result.js';
import type { Compactor, CompactOptions, CompactorOptions } from './compactor-api.js';
import { countsOf, createCompactorContext, liveHistory, loadLive, preparingSlot, reconcileLocked, type CompactorContext } from './compactor-context.js';
import type { ResummarizeResult } from './fold/resummarize-depth.js';

export { LOOP_GUARD_LIMIT } from './usage/loop-guard.js';
export type { ResummarizeResult } from './fold/resummarize-depth.js';
export type { UsageObservation } from './usage/observe-usage.js';
export type { ContextUsage, NextCompaction } from './usage/context-usage.js';
export type { Compactor, CompactOptions, CompactorOptions } from './compactor-api.js';

type Steps = typeof import('./compactor-steps.js');
let steps: Steps | undefined;

/** `run` with the compactor's steps (`compactor-steps.ts`), loaded by the first entry that runs one, at once after. */
function withSteps<T>(run: (steps: Steps) => Promise<T>): Promise<T> {
  if (steps !== undefined) return run(steps);
  return import('./compactor-steps.js').then((loaded) => {
    steps = loaded;
    return run(loaded);
  });
}

export function createCompactor(options: CompactorOptions): Compactor {
  const ctx = createCompactorContext(options);
  const { live, guard, warnings } = ctx;
  const { persistence, tokens } = options;
  const running = createRunning();
  const compact = (history: readonly ConversationMessage[], conversationId: string, compactOptions: CompactOptions = {}) =>
    running.track(withSteps((s) => s.compactHistory(ctx, { history, conversationId, options: compactOptions, from: 'caller' })));

  return {
    get settings() {
      return live.base;
    },
    settingsOf: (conversationId) => live.of(conversationId),
    configure(partial, scope) {
      return live.configure(partial, scope, (settings) => void ctx.budgets(settings));
    },
    frontier: (conversationId) => withSteps((s) => s.listFrontier(ctx.depsFor(conversationId), conversationId)),
    async isPaused(conversationId) {
      requireConversationId(conversationId);
      return guard.isPaused(conversationId);
    },
    async resume(conversationId) {
      requireConversationId(conversationId);
      await guard.clear(conversationId);
    },
    async usage(conversationId) {
      requireConversationId(conversationId);
      const history = await liveHistory(ctx, conversationId);
      const counts = await countsOf(ctx, conversationId);
      const { contextUsage } = await withSteps(async (s) => s);
      return contextUsage(conversationId, history, counts, {
        settings: live.of(conversationId),
        warnTokens: warnings.thresholdOf(conversationId),
        isPaused: () => guard.isPaused(conversationId),
      });
    },
    async observeUsage(conversationId, usage) {
      requireConversationId(conversationId);
      const { observeUsage, checkUsageObservation } = await withSteps(async (s) => s);
      return observeUsage(conversationId, checkUsageObservation(usage), { persistence, tokens, settings: live.of(conversationId), warnings });
    },
    async reconcile(conversationId) {
      requireConversationId(conversationId);
      const locked = await persistence.withConversationLock(conversationId, () => reconcileLocked(ctx, conversationId), { wait: true, purpose: 'a reconcile' });
      if (!locked.acquired) throw new MemfoldError('busy', `Conversation ${conversationId} is being compacted`);
      return locked.value;
    },
    drain: (timeoutMs) => running.drain(timeoutMs),
    compactStored: (conversationId, compactOptions = {}) => running.track(compactStoredNow(ctx, conversationId, compactOptions)),
    compactHistory: compact,
    compress: compact,
    resummarizeDepth: (conversationId, depth) => running.track(resummarizeDepthNow(ctx, conversationId, depth)),
  };
}

/** Compactions and re-summarizations in flight, so `drain` can wait for them (memfold's `close`). */
function createRunning() {
  const running = new Set<Promise<unknown>>();
  return {
    track<T>(work: Promise<T>): Promise<T> {
      running.add(work);
      void work.finally(() => running.delete(work)).catch(() => undefined);
      return work;
    },
    /** Waits for the work in flight, resolving to how many still run after `timeoutMs`. */
    async drain(timeoutMs: number): Promise<number> {
      checkDurationMs(timeoutMs, 'timeoutMs');
      const pending = [...running];
      if (pending.length === 0) return 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const settled = Promise.allSettled(pending).then(() => 'settled' as const);
      try {
        return (await Promise.race([settled, timedOut])) === 'settled' ? 0 : running.size;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

async function compactStoredNow(ctx: CompactorContext, conversationId: string, options: CompactOptions): Promise<CompactionResult> {
  const { compactHistory, failureCodeOf } = await withSteps(async (s) => s);
  const started = ctx.clock();
  let stored: ConversationMessage[];
  // One place among the compactions preparing, from the read of the rows to the plan (`preparingSlot`).
  let release: (() => void) | undefined;
  try {
    requireConversationId(conversationId);
    release = await preparingSlot(ctx, options.signal);
    stored = await loadLive(ctx, conversationId);
  } catch (error) {
    release?.();
    return Object.assign(initialResult([], 0), {
      status: 'failed' as const,
      failureCode: failureCodeOf(error),
      error: errorMessage(error),
      durationMs: ctx.clock() - started,
    });
  }
  // The rows read once, then the path every history takes: planned before the lock, so a turn below the
  // trigger locks and reconciles nothing; under the lock a plan made stale meanwhile is made again.
  try {
    return await compactHistory(ctx, { history: stored, conversationId, options, from: 'store', preparing: release });
  } finally {
    release();
  }
}

async function resummarizeDepthNow(ctx: CompactorContext, conversationId: string, depth: number): Promise<ResummarizeResult> {
  if (!Number.isInteger(depth) || depth < 0) throw new InvalidArgumentError('depth', 'must be an integer >= 0');
  const locked = await ctx.options.persistence.withConversationLock(
    conversationId,
    () => withSteps((s) => s.resummarizeDepthLocked(conversationId, depth, ctx.depsFor(conversationId))),
    { wait: true, purpose: 'a re-summarization' },
  );
  if (!locked.acquired) throw new MemfoldError('busy', `Conversation ${conversationId} is being compacted`);
  // The clip-archive was replaced: the running count of the context is stale.
  ctx.warnings.changed(conversationId);
  return locked.value;
}
