/**
 * The compactor: the entries callers use. `compactStored` (what `memfold.compact` calls) reads the live rows
 * and compacts them as `compactHistory` does a history the caller hands in: planned first (a skip takes no lock),
 * then, under the conversation's lock, reconciled and checked against the live rows.
 * The steps themselves live in their own modules (plan.ts, run-compaction.ts and the steps it sequences).
 * Neither entry throws: every failure comes back as a result, after undoing what was written.
 */
import { randomUUID } from 'node:crypto';
import { requireConversationId } from '../conversation/conversation-id.js';
import type { ConversationMessage } from '../conversation/types.js';
import { validateHistory } from '../conversation/validate-history.js';
import { InvalidArgumentError, MemfoldError, errorMessage } from '../errors.js';
import { checkDurationMs } from '../duration-ms.js';
import {
  calibrationFactorOf,
  conversationCounts,
  listFrontier,
  reconcileAndReport,
  summarizerInputBudget,
  chunkStretchBudget,
  type CompactionDeps,
  type ConversationCounts,
} from './compaction-deps.js';
import { beforeCompactInfo, checkDecision, checkFocus, focusedSummarizer, suppliedSummarizer } from './compaction-hooks.js';
import { compactionSummary, initialResult, type CompactionEvent, type CompactionFailureCode, type CompactionResult } from './compaction-result.js';
import type { CompactionSettings } from './compaction-settings.js';
import { createLiveSettings } from './live-settings.js';
import { contextUsage } from './usage/context-usage.js';
import { assembleContext } from './view/context-view.js';
import { createContextWarnings } from './usage/context-warnings.js';
import { createLoopGuard } from './usage/loop-guard.js';
import { checkUsageObservation, observeUsage } from './usage/observe-usage.js';
import { planTiers } from './plan/plan-tiers.js';
import type { ReconcileOutcome } from './journal/reconcile.js';
import { resummarizeDepthLocked, type ResummarizeResult } from './fold/resummarize-depth.js';
import type { RunnableTierPlan } from './plan/plan-tiers.js';
import { runTiers } from './run-tiers.js';
import { startEarlyFold, type EarlyFold } from './fold/early-fold.js';
import { atStage, clientAttemptsOf, StageError } from './stage-error.js';

export { LOOP_GUARD_LIMIT } from './usage/loop-guard.js';
export type { ResummarizeResult } from './fold/resummarize-depth.js';
export type { UsageObservation } from './usage/observe-usage.js';
export type { ContextUsage, NextCompaction } from './usage/context-usage.js';

import type { Compactor, CompactOptions, CompactorOptions } from './compactor-api.js';
import type { LockWaitOptions } from '../persistence/lock-wait.js';

export type { Compactor, CompactOptions, CompactorOptions } from './compactor-api.js';

type Prepared =
  | { kind: 'run'; tiers: RunnableTierPlan; history: readonly ConversationMessage[]; result: CompactionResult }
  | { kind: 'skip'; result: CompactionResult };

function failureCodeOf(error: unknown): CompactionFailureCode {
  return InvalidArgumentError.isInstance(error) ? 'invalid_input' : StageError.isInstance(error) ? error.failureCode : 'unexpected';
}

/** What a compaction's wait for the lock is: `wait`, its bounds, and what a waiter's error calls the holder. */
function lockOptionsOf(options: CompactOptions): LockWaitOptions {
  return {
    wait: options.wait ?? false,
    purpose: 'a compaction',
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.lockTimeoutMs !== undefined ? { timeoutMs: options.lockTimeoutMs } : {}),
  };
}

/** The `busy` error of a wait for the lock that ran out or was aborted (`persistence/lock-wait.ts`). */
function isLockWaitError(error: unknown): error is MemfoldError {
  return MemfoldError.isInstance(error) && error.code === 'busy' && typeof error.details['waitedMs'] === 'number';
}

/** The highest seq of a history (0 when it holds none but the clip-archive). */
function lastSeqOf(history: readonly ConversationMessage[]): number {
  return history.reduce((last, message) => Math.max(last, message.seq), 0);
}

export function createCompactor(options: CompactorOptions): Compactor {
  const live = options.liveSettings ?? createLiveSettings(options.settings);
  const { summarizer, archive, persistence, tokens } = options;
  const clock = options.clock ?? Date.now;
  const newId = options.newId ?? randomUUID;
  const emit = (event: CompactionEvent) => options.onEvent?.(event);
  const prices = options.prices ? { prices: options.prices } : {};
  /** The summarizer budgets of a settings object: refused (`invalid_config`) when its window leaves no room for a chunk. */
  const budgets = (settings: CompactionSettings) => ({
    inputBudget: summarizerInputBudget(summarizer, tokens, settings),
    stretchBudget: chunkStretchBudget(summarizer, tokens, settings),
  });
  /** The deps of each settings object in force, made once: settings change only through `configure`. */
  const depsBySettings = new WeakMap<CompactionSettings, CompactionDeps>();
  const depsOf = (settings: CompactionSettings): CompactionDeps => {
    let made = depsBySettings.get(settings);
    if (made === undefined) {
      made = { summarizer, archive, persistence, tokens, settings, clock, newId, emit, ...budgets(settings), ...prices };
      depsBySettings.set(settings, made);
    }
    return made;
  };
  /** A conversation's deps, with its settings as they are now. */
  const depsFor = (conversationId: string) => depsOf(live.of(conversationId));
  // The settings every conversation starts from must leave the summarizer room: refused here, when memfold opens.
  depsOf(live.base);
  const guard = createLoopGuard((conversationId) => live.of(conversationId), persistence, emit);
  const warnings =
    options.contextWarnings ??
    createContextWarnings({ settingsOf: (conversationId) => live.of(conversationId), countMessage: (message) => tokens.countMessage(message), emit });

  /**
   * The loop guard's writes after a result is settled: a store that fails them must not turn a compaction that
   * committed into a failure. The failure is reported instead, and the guard counts nothing for that run.
   */
  async function guardQuietly(conversationId: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      emit({ type: 'loop_guard_failed', conversationId, error: errorMessage(error) });
    }
  }

  /** Plan a validated history: a skip (below the trigger, nothing to compact, paused) or the tiers to run. */
  async function prepare(history: readonly ConversationMessage[], conversationId: string, counts: ConversationCounts, force: boolean): Promise<Prepared> {
    const outcome = planTiers(history, live.of(conversationId), counts.context, { force, factor: counts.factor });
    const result = initialResult(history, outcome.tokensBefore);
    warnings.observe(conversationId, outcome.tokensBefore, lastSeqOf(history), counts.factor);
    if (outcome.kind === 'skip') {
      if (outcome.reason === 'below_trigger') await guardQuietly(conversationId, () => guard.underTrigger(conversationId));
      return { kind: 'skip', result: Object.assign(result, { skipReason: outcome.reason }) };
    }
    if (!force && (await guard.isPaused(conversationId))) return { kind: 'skip', result: Object.assign(result, { skipReason: 'paused' as const }) };
    if (outcome.kind === 'compact' && outcome.plan.scope) result.scope = outcome.plan.scope;
    return { kind: 'run', tiers: outcome, history, result };
  }

  /** Run a plan; `early` answers the fold's requests it predicted (early-fold.ts). */
  async function run(
    prepared: Prepared,
    conversationId: string,
    counts: ConversationCounts,
    callDeps: CompactionDeps,
    signal?: AbortSignal,
    early?: EarlyFold,
  ): Promise<CompactionResult> {
    if (prepared.kind === 'skip') return prepared.result;
    const runDeps = early ? { ...callDeps, summarizer: early.summarizer } : callDeps;
    const done = await runTiers(prepared.tiers, prepared.history, conversationId, runDeps, prepared.result, counts, signal);
    if (done.status === 'compacted') warnings.changed(conversationId, done.tokensAfter);
    await guardQuietly(conversationId, () => guard.track(conversationId, done));
    return done;
  }

  /** Reconcile the conversation (the caller holds its lock); an operation finished there changed the live rows. */
  async function reconcileLocked(conversationId: string): Promise<ReconcileOutcome[]> {
    const outcomes = await reconcileAndReport(conversationId, depsFor(conversationId));
    if (outcomes.some((outcome) => outcome.action === 'committed')) warnings.changed(conversationId);
    return outcomes;
  }
  const reconcileFirst = (conversationId: string) => atStage('reconcile_failed', () => reconcileLocked(conversationId));
  /**
   * Whether the live rows are still those `history` was read from: every message of it live, and the same number of
   * them cleared (tier 2's placeholder is the only change a live row takes in place; rows appended since do not count).
   */
  async function stillLive(conversationId: string, history: readonly ConversationMessage[]): Promise<boolean> {
    const ids = history.map((m) => m.id);
    const cleared = history.filter((m) => m.clearedOutputLabel !== undefined).length;
    const [live, liveCleared] = await Promise.all([
      persistence.countLive(conversationId, ids),
      persistence.countLive(conversationId, ids, { clearedOnly: true }),
    ]);
    return live === ids.length && liveCleared === cleared;
  }
  /** The live rows as a history: system prompt, clip-archive, then the rest. */
  const liveHistory = async (conversationId: string) => assembleContext(await persistence.loadHistory(conversationId));
  const loadLive = (conversationId: string) => atStage('unexpected', () => liveHistory(conversationId));
  /** How the conversation is counted now: its calibration factor read from the live store. */
  const countsOf = async (conversationId: string) => conversationCounts(tokens, await calibrationFactorOf(persistence, conversationId));
  const loadCounts = (conversationId: string) => atStage('unexpected', () => countsOf(conversationId));

  /**
   * Ask `beforeCompact` about a plan about to run: the deps this compaction runs with (its focus, a supplied summary),
   * or the decision to cancel. A hook that throws or answers nonsense fails the compaction (`hook_failed`).
   */
  async function askHooks(
    tiers: RunnableTierPlan,
    conversationId: string,
    force: boolean,
    focus: string | undefined,
  ): Promise<{ cancel: true; reason?: string } | { cancel: false; callDeps: CompactionDeps; supplied: boolean }> {
    const deps = depsFor(conversationId);
    const focused = focus === undefined ? deps : { ...deps, summarizer: focusedSummarizer(deps.summarizer, focus) };
    const before = options.hooks?.beforeCompact;
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
  async function reportEnd(conversationId: string, result: CompactionResult): Promise<void> {
    emit({ type: 'compaction_ended', conversationId, ...compactionSummary(result) });
    const after = options.hooks?.afterCompact;
    if (!after) return;
    try {
      await after(result);
    } catch (error) {
      emit({ type: 'hook_failed', conversationId, hook: 'afterCompact', error: errorMessage(error) });
    }
  }

  /**
   * `from` says who holds `input`. A caller's history comes back as given on a skip, as its contract says, also when
   * the live rows were planned instead (part of it archived meanwhile, or none of it stored) and skipped; rows
   * `compactStored` read come back as the live rows now, which a compaction that committed meanwhile changed.
   */
  async function compactHistory(
    input: readonly ConversationMessage[],
    conversationId: string,
    options: CompactOptions = {},
    from: 'caller' | 'store' = 'caller',
  ): Promise<CompactionResult> {
    const startedAt = clock();
    // A continuation note (`context()`'s view after a compaction) is no row of the conversation: it is left out.
    const history = Array.isArray(input) ? input.filter((m) => m?.kind !== 'continuation') : input;
    // Before validation `history` may be anything: the result must still be built without throwing.
    const given = Array.isArray(history) ? [...history] : [];
    let result = initialResult(given, 0);
    let started = false;
    let supplied = false;
    try {
      validateHistory(history, conversationId);
      const focus = checkFocus(options.focus);
      const counts = await loadCounts(conversationId);
      const force = options.force ?? false;
      const prepared = await prepare(history, conversationId, counts, force);
      result = prepared.result;
      if (prepared.kind === 'skip') return result;
      const { tiers } = prepared;
      const asked = await askHooks(tiers, conversationId, force, focus);
      if (asked.cancel) {
        return Object.assign(result, {
          skipReason: 'cancelled' as const,
          hook: { decision: 'cancelled' as const, ...(asked.reason !== undefined ? { reason: asked.reason } : {}) },
        });
      }
      const { callDeps } = asked;
      supplied = asked.supplied;
      started = true;
      emit({
        type: 'compaction_started',
        conversationId,
        tier: tiers.kind === 'compact' ? 3 : 2,
        tokensBefore: tiers.tokensBefore,
        summarizer: callDeps.summarizer.id,
      });
      /** Under the lock, after reconciling: run the plan, or plan again on the live rows when they changed. */
      const runLocked = async (early: EarlyFold | undefined): Promise<CompactionResult> => {
        // Another process (or a finished interrupted operation) may have archived part of the caller's history, or
        // cleared some of its tool outputs in place: two indexed counts tell, and only then are the live rows loaded
        // to plan again.
        if (await atStage('unexpected', () => stillLive(conversationId, history)))
          return run(prepared, conversationId, counts, callDeps, options.signal, early);
        // The rows changed: a compaction that committed meanwhile also dropped the calibration.
        const live = await loadLive(conversationId);
        const liveCounts = await loadCounts(conversationId);
        const replanned = await prepare(live, conversationId, liveCounts, force);
        if (replanned.kind === 'skip' && from === 'caller') {
          return Object.assign(initialResult(history, prepared.result.tokensBefore), { skipReason: replanned.result.skipReason });
        }
        result = replanned.result;
        return run(replanned, conversationId, liveCounts, callDeps, options.signal, early);
      };
      const locked = await persistence.withConversationLock(
        conversationId,
        async () => {
          const reconciled = await reconcileFirst(conversationId);
          // The fold's requests go out now, beside the writes before the fold, unless reconcile just changed the rows
          // (or the application supplied the summary: there is nothing to ask).
          const early =
            supplied || reconciled.some((outcome) => outcome.action === 'committed')
              ? undefined
              : await startEarlyFold(tiers, history, conversationId, callDeps, counts, options.signal);
          try {
            return await runLocked(early);
          } finally {
            early?.stop();
          }
        },
        lockOptionsOf(options),
      );
      if (!locked.acquired) return Object.assign(result, { skipReason: 'busy' as const });
      result = locked.value;
      return result;
    } catch (error) {
      // A wait for the lock that ran out changed nothing: busy, with the error saying what it waited for (an aborted
      // wait fails `aborted`, as an abort at any other point does).
      if (isLockWaitError(error) && error.details['reason'] === 'lock_timeout') {
        return Object.assign(result, { status: 'skipped' as const, history: given, skipReason: 'busy' as const, error: errorMessage(error) });
      }
      if (isLockWaitError(error))
        return Object.assign(result, { status: 'failed' as const, history: given, failureCode: 'aborted' as const, error: errorMessage(error) });
      return Object.assign(result, {
        status: 'failed' as const,
        history: given,
        failureCode: failureCodeOf(error),
        error: errorMessage(error),
        ...clientAttemptsOf(error),
      });
    } finally {
      result.durationMs = clock() - startedAt;
      if (supplied && result.status !== 'skipped') result.hook = { decision: 'supplied' };
      if (started) await reportEnd(conversationId, result);
    }
  }

  /** Compactions and re-summarizations in flight, so `drain` can wait for them (memfold's `close`). */
  const running = new Set<Promise<unknown>>();
  function track<T>(work: Promise<T>): Promise<T> {
    running.add(work);
    void work.finally(() => running.delete(work)).catch(() => undefined);
    return work;
  }

  return {
    get settings() {
      return live.base;
    },
    settingsOf: (conversationId) => live.of(conversationId),
    configure(partial, scope) {
      return live.configure(partial, scope, (settings) => void budgets(settings));
    },
    frontier: (conversationId) => listFrontier(depsFor(conversationId), conversationId),
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
      const history = await liveHistory(conversationId);
      const counts = await countsOf(conversationId);
      return contextUsage(conversationId, history, counts, {
        settings: live.of(conversationId),
        warnTokens: warnings.thresholdOf(conversationId),
        isPaused: () => guard.isPaused(conversationId),
      });
    },

    async observeUsage(conversationId, usage) {
      requireConversationId(conversationId);
      return observeUsage(conversationId, checkUsageObservation(usage), { persistence, tokens, settings: live.of(conversationId), warnings });
    },

    async reconcile(conversationId) {
      requireConversationId(conversationId);
      const locked = await persistence.withConversationLock(conversationId, () => reconcileLocked(conversationId), { wait: true, purpose: 'a reconcile' });
      if (!locked.acquired) throw new MemfoldError('busy', `Conversation ${conversationId} is being compacted`);
      return locked.value;
    },

    async drain(timeoutMs) {
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

    compactStored: (conversationId, options = {}) => track(compactStoredNow(conversationId, options)),

    compactHistory: (history, conversationId, options) => track(compactHistory(history, conversationId, options)),

    compress: (history, conversationId, options) => track(compactHistory(history, conversationId, options)),

    resummarizeDepth: (conversationId, depth) => track(resummarizeDepthNow(conversationId, depth)),
  };

  async function compactStoredNow(conversationId: string, options: CompactOptions): Promise<CompactionResult> {
    const started = clock();
    let stored: ConversationMessage[];
    try {
      requireConversationId(conversationId);
      stored = await loadLive(conversationId);
    } catch (error) {
      return Object.assign(initialResult([], 0), {
        status: 'failed' as const,
        failureCode: failureCodeOf(error),
        error: errorMessage(error),
        durationMs: clock() - started,
      });
    }
    // The rows read once, then the path every history takes: planned before the lock, so a turn below the
    // trigger locks and reconciles nothing; under the lock a plan made stale meanwhile is made again.
    return compactHistory(stored, conversationId, options, 'store');
  }

  async function resummarizeDepthNow(conversationId: string, depth: number): Promise<ResummarizeResult> {
    if (!Number.isInteger(depth) || depth < 0) throw new InvalidArgumentError('depth', 'must be an integer >= 0');
    const locked = await persistence.withConversationLock(conversationId, () => resummarizeDepthLocked(conversationId, depth, depsFor(conversationId)), {
      wait: true,
      purpose: 'a re-summarization',
    });
    if (!locked.acquired) throw new MemfoldError('busy', `Conversation ${conversationId} is being compacted`);
    // The clip-archive was replaced: the running count of the context is stale.
    warnings.changed(conversationId);
    return locked.value;
  }
}
