/**
 * What the compactor's entries share, made once by `createCompactor`: the ports, the live settings, the deps of each
 * settings object in force, the loop guard and the context warnings.
 */
import { randomUUID } from 'node:crypto';
import type { ConversationMessage } from '../conversation/types.js';
import { errorMessage } from '../errors.js';
import type { CompactionDeps } from './compaction-deps.js';
import type { CompactionEvent } from './compaction-result.js';
import type { CompactionSettings } from './compaction-settings.js';
import type { CompactorOptions } from './compactor-api.js';
import { chunkStretchBudget, summarizerInputBudget } from './fold/summarizer-budget.js';
import type { ReconcileOutcome } from './journal/reconcile.js';
import { createLiveSettings, type LiveSettings } from './live-settings.js';
import { calibrationFactorOf, conversationCounts, type ConversationCounts } from './usage/conversation-counts.js';
import { createContextWarnings, type ContextWarnings } from './usage/context-warnings.js';
import { createLoopGuard, type LoopGuard } from './usage/loop-guard.js';
import { atStage, StageError } from './stage-error.js';
import { createSemaphore, type Semaphore } from '../semaphore.js';
import { assembleContext } from './view/context-view.js';

export interface CompactorContext {
  options: CompactorOptions;
  live: LiveSettings;
  clock: () => number;
  emit: (event: CompactionEvent) => void;
  /** A conversation's deps, with its settings as they are now. */
  depsFor(conversationId: string): CompactionDeps;
  /** The summarizer budgets of a settings object: refused (`invalid_config`) when its window leaves no room for a chunk. */
  budgets(settings: CompactionSettings): { inputBudget: number; stretchBudget: number };
  guard: LoopGuard;
  warnings: ContextWarnings;
  /** The places of the compactions reading and planning their history (`preparingSlot`). */
  preparing: Semaphore;
}

/**
 * How many compactions read and plan their history at once; the others wait their turn. Reading and planning are
 * this thread's work (an embedded store's queries run on it too), so running them all at once finishes none sooner:
 * with 100 compactions started together every one read its rows before the first request went out, 1 s later, and
 * the model sat idle. Two at a time lets one's reads overlap the other's planning.
 */
export const PREPARING_AT_ONCE = 2;

export function createCompactorContext(options: CompactorOptions): CompactorContext {
  const live = options.liveSettings ?? createLiveSettings(options.settings);
  const { summarizer, archive, persistence, tokens } = options;
  const clock = options.clock ?? Date.now;
  const newId = options.newId ?? randomUUID;
  const emit = (event: CompactionEvent) => options.onEvent?.(event);
  const prices = options.prices ? { prices: options.prices } : {};
  const budgets = (settings: CompactionSettings) => ({
    inputBudget: summarizerInputBudget(summarizer, tokens, settings),
    stretchBudget: chunkStretchBudget(summarizer, tokens, settings),
  });
  // The deps of each settings object in force, made once: settings change only through `configure`.
  const depsBySettings = new WeakMap<CompactionSettings, CompactionDeps>();
  const depsOf = (settings: CompactionSettings): CompactionDeps => {
    let made = depsBySettings.get(settings);
    if (made === undefined) {
      made = { summarizer, archive, persistence, tokens, settings, clock, newId, emit, ...budgets(settings), ...prices };
      depsBySettings.set(settings, made);
    }
    return made;
  };
  // The settings every conversation starts from must leave the summarizer room: refused here, when memfold opens.
  depsOf(live.base);
  const settingsOf = (conversationId: string) => live.of(conversationId);
  const warnings = options.contextWarnings ?? createContextWarnings({ settingsOf, countMessage: (message) => tokens.countMessage(message), emit });
  return {
    options,
    live,
    clock,
    emit,
    depsFor: (conversationId) => depsOf(live.of(conversationId)),
    budgets,
    guard: createLoopGuard(settingsOf, persistence, emit),
    warnings,
    preparing: createSemaphore(PREPARING_AT_ONCE),
  };
}

/**
 * Waits for a place among the compactions preparing (`PREPARING_AT_ONCE`); resolves to its release, which may be
 * called more than once. A `signal` that aborts first fails the wait as `aborted`, holding nothing.
 */
export async function preparingSlot(ctx: CompactorContext, signal: AbortSignal | undefined): Promise<() => void> {
  if (!(await ctx.preparing.acquire(signal))) throw new StageError('aborted', signal?.reason);
  // A turn of the event loop first: an embedded store answers in promise callbacks alone, so back-to-back
  // preparations would hold the thread until the last, and the archive's answers and the model's requests with it.
  await new Promise((resolve) => setImmediate(resolve));
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    ctx.preparing.release();
  };
}

/** The live rows as a history: system prompt, clip-archive, then the rest. */
export async function liveHistory(ctx: CompactorContext, conversationId: string): Promise<ConversationMessage[]> {
  return assembleContext(await ctx.options.persistence.loadHistory(conversationId));
}

/** How the conversation is counted now: its calibration factor read from the live store. */
export async function countsOf(ctx: CompactorContext, conversationId: string): Promise<ConversationCounts> {
  return conversationCounts(ctx.options.tokens, await calibrationFactorOf(ctx.options.persistence, conversationId));
}

export const loadLive = (ctx: CompactorContext, conversationId: string) => atStage('unexpected', () => liveHistory(ctx, conversationId));
export const loadCounts = (ctx: CompactorContext, conversationId: string) => atStage('unexpected', () => countsOf(ctx, conversationId));

/** Reconcile the conversation (the caller holds its lock); an operation finished there changed the live rows. */
export async function reconcileLocked(ctx: CompactorContext, conversationId: string): Promise<ReconcileOutcome[]> {
  // The journal's modules load with the first reconcile (or compaction), not with the compactor.
  const { reconcileAndReport } = await import('./journal/reconcile.js');
  const outcomes = await reconcileAndReport(conversationId, ctx.depsFor(conversationId));
  if (outcomes.some((outcome) => outcome.action === 'committed')) ctx.warnings.changed(conversationId);
  return outcomes;
}

/**
 * The loop guard's writes after a result is settled: a store that fails them must not turn a compaction that
 * committed into a failure. The failure is reported instead, and the guard counts nothing for that run.
 */
export async function guardQuietly(ctx: CompactorContext, conversationId: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    ctx.emit({ type: 'loop_guard_failed', conversationId, error: errorMessage(error) });
  }
}
