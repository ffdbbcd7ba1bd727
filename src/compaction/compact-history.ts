/**
 * One compaction of a history, the path every entry takes: validated once and planned once before the lock (a skip
 * takes no lock), the hooks asked, then under the conversation's lock reconciled, checked against the live rows and
 * run, the fold's requests sent early. Never throws: every failure comes back as a result, after undoing what was
 * written.
 */
import type { ConversationMessage } from '../conversation/types.js';
import { validateHistory } from '../conversation/validate-history.js';
import { InvalidArgumentError, MemfoldError, errorMessage } from '../errors.js';
import type { LockWaitOptions } from '../persistence/lock-wait.js';
import type { CompactionDeps } from './compaction-deps.js';
import { checkFocus } from './compaction-hooks.js';
import { initialResult, type CompactionFailureCode, type CompactionResult } from './compaction-result.js';
import type { CompactOptions } from './compactor-api.js';
import { guardQuietly, loadCounts, loadLive, preparingSlot, reconcileLocked, type CompactorContext } from './compactor-context.js';
import { startEarlyFold, type EarlyFold } from './fold/early-fold.js';
import { askHooks, reportEnd } from './hook-calls.js';
import { isClipArchive } from './plan/plan.js';
import { prepare, stillLive, type Prepared } from './prepare-compaction.js';
import { runTiers } from './run-tiers.js';
import { newestShownSummary } from './view/clip-archive.js';
import { atStage, clientAttemptsOf, StageError } from './stage-error.js';

export interface CompactHistoryInput {
  /** Anything a caller handed in: validated before it is read. */
  history: readonly ConversationMessage[];
  conversationId: string;
  options: CompactOptions;
  /**
   * Who holds `history`. A caller's history comes back as given on a skip, as its contract says, also when the live
   * rows were planned instead (part of it archived meanwhile, or none of it stored) and skipped; rows `compactStored`
   * read come back as the live rows now, which a compaction that committed meanwhile changed.
   */
  from: 'caller' | 'store';
  /**
   * The release of the place among the compactions preparing (`preparingSlot`) that the caller took before reading
   * the rows; without it, one is taken here. Released once the plan is made.
   */
  preparing?: () => void;
}

/** What the `finally` of a compaction reports: the result as it stands, and whether the compaction started. */
interface Progress {
  result: CompactionResult;
  started: boolean;
  supplied: boolean;
}

export function failureCodeOf(error: unknown): CompactionFailureCode {
  return InvalidArgumentError.isInstance(error) ? 'invalid_input' : StageError.isInstance(error) ? error.failureCode : 'unexpected';
}

export async function compactHistory(ctx: CompactorContext, input: CompactHistoryInput): Promise<CompactionResult> {
  const startedAt = ctx.clock();
  // A continuation note (`context()`'s view after a compaction) is no row of the conversation: it is left out.
  const history = Array.isArray(input.history) ? input.history.filter((m) => m?.kind !== 'continuation') : input.history;
  // Before validation `history` may be anything: the result must still be built without throwing.
  const given = Array.isArray(history) ? [...history] : [];
  const progress: Progress = { result: initialResult(given, 0), started: false, supplied: false };
  try {
    return await compactValidated(ctx, { ...input, history }, progress);
  } catch (error) {
    return failedResult(progress.result, given, error);
  } finally {
    const { result } = progress;
    result.durationMs = ctx.clock() - startedAt;
    if (progress.supplied && result.status !== 'skipped') result.hook = { decision: 'supplied' };
    if (progress.started) await reportEnd(ctx, input.conversationId, result);
  }
}

async function compactValidated(ctx: CompactorContext, input: CompactHistoryInput, progress: Progress): Promise<CompactionResult> {
  const { conversationId, options } = input;
  const force = options.force ?? false;
  const focus = checkFocus(options.focus);
  const release = input.preparing ?? (await preparingSlot(ctx, options.signal));
  let prepared: Prepared;
  try {
    prepared = await validateAndPrepare(ctx, input, force);
  } finally {
    release();
  }
  progress.result = prepared.result;
  if (prepared.kind === 'skip') return progress.result;
  const { tiers } = prepared.run;
  const asked = await askHooks(ctx, { tiers, conversationId, force, focus });
  if (asked.cancel) {
    const hook = { decision: 'cancelled' as const, ...(asked.reason !== undefined ? { reason: asked.reason } : {}) };
    return Object.assign(progress.result, { skipReason: 'cancelled' as const, hook });
  }
  const { callDeps } = asked;
  progress.supplied = asked.supplied;
  progress.started = true;
  const tier = tiers.kind === 'compact' ? 3 : 2;
  ctx.emit({ type: 'compaction_started', conversationId, tier, tokensBefore: tiers.tokensBefore, summarizer: callDeps.summarizer.id });
  const locked = await ctx.options.persistence.withConversationLock(
    conversationId,
    () => underLock(ctx, { ...input, prepared, callDeps, supplied: asked.supplied, force }, progress),
    lockOptionsOf(options),
  );
  if (!locked.acquired) return Object.assign(progress.result, { skipReason: 'busy' as const });
  progress.result = locked.value;
  return progress.result;
}

/** Validated (a caller's history) and planned once, in a place among the compactions preparing. */
async function validateAndPrepare(ctx: CompactorContext, input: CompactHistoryInput, force: boolean): Promise<Prepared> {
  const { history, conversationId } = input;
  // A caller's history is checked; rows memfold read from its own store were checked when appended, and a pass over
  // every message (times parsed again, tool groups walked) cost about a fifth of planning at 100k messages.
  if (input.from === 'caller') validateHistory(history, conversationId);
  const counts = await loadCounts(ctx, conversationId);
  return prepare(ctx, { history, conversationId, counts, force });
}

interface LockedInput extends CompactHistoryInput {
  prepared: Extract<Prepared, { kind: 'run' }>;
  callDeps: CompactionDeps;
  supplied: boolean;
  force: boolean;
}

/** Under the lock, after reconciling: the fold's requests sent early, then the plan run. */
async function underLock(ctx: CompactorContext, input: LockedInput, progress: Progress): Promise<CompactionResult> {
  const { conversationId, prepared, callDeps, options } = input;
  const reconciled = await atStage('reconcile_failed', () => reconcileLocked(ctx, conversationId));
  // The fold's requests go out now, beside the writes before the fold, unless reconcile just changed the rows
  // (or the application supplied the summary: there is nothing to ask).
  const early =
    input.supplied || reconciled.some((outcome) => outcome.action === 'committed')
      ? undefined
      : await startEarlyFold({
          chunks: prepared.run.chunks,
          conversationId,
          deps: callDeps,
          ...(options.signal ? { signal: options.signal } : {}),
          ...shownPreviousOf(prepared.history),
        });
  try {
    return await runLocked(ctx, input, early, progress);
  } finally {
    early?.stop();
  }
}

/** The newest summary the history's clip-archive shows, when it says (`newestShownSummary`); none without one. */
function shownPreviousOf(history: readonly ConversationMessage[]): { shownPrevious?: { summary: string | undefined } } {
  const clip = history.find(isClipArchive);
  const shown = clip ? newestShownSummary(clip.content) : { summary: undefined };
  return shown ? { shownPrevious: shown } : {};
}

/** Run the plan, or plan again on the live rows when they changed: a new input, planned once in turn. */
async function runLocked(ctx: CompactorContext, input: LockedInput, early: EarlyFold | undefined, progress: Progress): Promise<CompactionResult> {
  const { history, conversationId, prepared, callDeps, options, force } = input;
  const runWith = { conversationId, callDeps, signal: options.signal, early };
  // Another process (or a finished interrupted operation) may have archived part of the caller's history, or
  // cleared some of its tool outputs in place: two indexed counts tell, and only then are the live rows loaded
  // to plan again.
  if (await atStage('unexpected', () => stillLive(ctx, conversationId, history))) return run(ctx, { ...runWith, prepared });
  // The rows changed: a compaction that committed meanwhile also dropped the calibration.
  const live = await loadLive(ctx, conversationId);
  const liveCounts = await loadCounts(ctx, conversationId);
  const replanned = await prepare(ctx, { history: live, conversationId, counts: liveCounts, force });
  if (replanned.kind === 'skip' && input.from === 'caller') {
    return Object.assign(initialResult(history, prepared.result.tokensBefore), { skipReason: replanned.result.skipReason });
  }
  progress.result = replanned.result;
  return run(ctx, { ...runWith, prepared: replanned });
}

/** Run a plan; `early` answers the fold's requests it sent ahead (early-fold.ts). */
async function run(
  ctx: CompactorContext,
  input: { prepared: Prepared; conversationId: string; callDeps: CompactionDeps; signal: AbortSignal | undefined; early: EarlyFold | undefined },
): Promise<CompactionResult> {
  const { prepared, conversationId, callDeps, signal, early } = input;
  if (prepared.kind === 'skip') return prepared.result;
  const deps = early ? { ...callDeps, summarizer: early.summarizer } : callDeps;
  const { run: planned, history, result, counts } = prepared;
  const done = await runTiers({ run: planned, history, conversationId, deps, result, counts, ...(signal ? { signal } : {}) });
  if (done.status === 'compacted') ctx.warnings.changed(conversationId, done.tokensAfter);
  await guardQuietly(ctx, conversationId, () => ctx.guard.track(conversationId, done));
  return done;
}

/** A failure as a result; a wait for the lock that ran out changed nothing: busy, with the error saying what it waited for. */
function failedResult(result: CompactionResult, given: ConversationMessage[], error: unknown): CompactionResult {
  // An aborted wait fails `aborted`, as an abort at any other point does.
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
