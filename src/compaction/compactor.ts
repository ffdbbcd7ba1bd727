/**
 * The compactor: the entries callers use. `compactStored` (what `memfold.compact` calls) reads the live rows
 * and compacts them as `compactHistory` does a history the caller hands in: planned first (a skip takes no lock),
 * then, under the conversation's lock, reconciled and checked against the live rows.
 * The steps themselves live in their own modules (plan.ts, run-compaction.ts and the steps it sequences).
 * Neither entry throws: every failure comes back as a result, after undoing what was written.
 */
import { randomUUID } from 'node:crypto';
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { validateHistory } from '../conversation/validate-history.js';
import { InvalidArgumentError, MemfoldError, errorMessage } from '../errors.js';
import type { Archive } from '../archive/archive.js';
import type { Summarizer } from '../summarizer/summarizer.js';
import type { PersistenceProvider } from '../persistence/persistence-provider.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { countOnce, listFrontier, reconcileAndReport, summarizerInputBudget, type CompactionDeps } from './compaction-deps.js';
import { initialResult, type CompactionEvent, type CompactionFailureCode, type CompactionResult } from './compaction-result.js';
import { resolveCompactionSettings, type CompactionSettings } from './compaction-settings.js';
import { assembleContext } from './context-view.js';
import { createLoopGuard } from './loop-guard.js';
import { planCompaction, type CompactionPlan } from './plan.js';
import type { ReconcileOutcome } from './reconcile.js';
import { resummarizeDepthLocked, type ResummarizeResult } from './resummarize-depth.js';
import { runCompaction } from './run-compaction.js';
import { atStage, StageError } from './stage-error.js';

export { LOOP_GUARD_LIMIT } from './loop-guard.js';
export type { ResummarizeResult } from './resummarize-depth.js';

export interface CompactorOptions {
  summarizer: Summarizer;
  archive: Archive;
  persistence: PersistenceProvider;
  tokens: TokenCounter;
  settings?: Partial<CompactionSettings>;
  clock?: () => number;
  newId?: () => string;
  onEvent?: (event: CompactionEvent) => void;
}

export interface CompactOptions {
  /** Compact even below the trigger. */
  force?: boolean;
  /** Wait for another compaction of the same conversation instead of skipping with `busy`. */
  wait?: boolean;
  signal?: AbortSignal;
}

export interface Compactor {
  readonly settings: CompactionSettings;
  /**
   * Compact the stored conversation: load the live rows and plan (below the trigger nothing is locked), then as
   * `compactHistory` does: under the lock, reconcile, re-plan if the rows changed, run. The result's history is the
   * live history (after the compaction, or as it stood when nothing changed). Never throws.
   */
  compactStored(conversationId: string, options?: CompactOptions): Promise<CompactionResult>;
  /**
   * Compact `history`, the conversation as the caller holds it. Planned before the lock (below the trigger
   * nothing is locked or read); under the lock, after reconciling, a history that is no longer live (part of
   * it archived meanwhile) is re-planned from the live rows. On skip or failure the result's history is
   * the one given. Never throws.
   */
  compactHistory(history: readonly ConversationMessage[], conversationId: string, options?: CompactOptions): Promise<CompactionResult>;
  /** Operator re-summarization: fold every frontier batch of `depth` into one batch of depth + 1 and refresh the clip-archive. */
  resummarizeDepth(conversationId: string, depth: number): Promise<ResummarizeResult>;
  /** The frontier: summary batches no higher-depth batch covers, in time order. */
  frontier(conversationId: string): Promise<ArchiveEntry[]>;
  /** Finish or undo the conversation's interrupted compactions (waits for its lock). */
  reconcile(conversationId: string): Promise<ReconcileOutcome[]>;
  /** Whether the loop guard has paused automatic compaction of this conversation. */
  isPaused(conversationId: string): boolean;
  /** Lift the loop guard's pause (a forced compaction that gets under the trigger also lifts it). */
  resume(conversationId: string): void;
}

type Prepared = { kind: 'run'; plan: CompactionPlan; result: CompactionResult } | { kind: 'skip'; result: CompactionResult };

function failureCodeOf(error: unknown): CompactionFailureCode {
  return error instanceof InvalidArgumentError ? 'invalid_input' : error instanceof StageError ? error.code : 'unexpected';
}

function requireConversationId(conversationId: unknown): asserts conversationId is string {
  if (typeof conversationId !== 'string' || conversationId.length === 0) throw new InvalidArgumentError('conversationId', 'must be a non-empty string');
}

export function createCompactor(options: CompactorOptions): Compactor {
  const settings = resolveCompactionSettings(options.settings);
  const { summarizer: model, archive: memory, persistence, tokens } = options;
  const deps: CompactionDeps = {
    summarizer: model,
    archive: memory,
    persistence,
    tokens,
    settings,
    clock: options.clock ?? Date.now,
    newId: options.newId ?? randomUUID,
    emit: (event) => options.onEvent?.(event),
    inputBudget: summarizerInputBudget(model, tokens, settings),
  };
  const guard = createLoopGuard(settings, deps.emit);

  /** Plan a validated history: a skip (below the trigger, nothing to compact, paused) or a plan to run. */
  function prepare(history: readonly ConversationMessage[], conversationId: string, count: (m: ConversationMessage) => number, force: boolean): Prepared {
    const outcome = planCompaction(history, settings, count, { force });
    const result = initialResult(history, outcome.tokensBefore);
    const threshold = Math.floor(settings.contextWindow * settings.warnAt);
    if (outcome.tokensBefore >= threshold) deps.emit({ type: 'context_warning', conversationId, tokens: outcome.tokensBefore, threshold });
    if (outcome.kind === 'skip') {
      if (outcome.reason === 'below_trigger') guard.clear(conversationId);
      return { kind: 'skip', result: Object.assign(result, { skipReason: outcome.reason }) };
    }
    if (!force && guard.isPaused(conversationId)) return { kind: 'skip', result: Object.assign(result, { skipReason: 'paused' as const }) };
    return { kind: 'run', plan: outcome, result };
  }

  async function run(prepared: Prepared, conversationId: string, count: (m: ConversationMessage) => number, signal?: AbortSignal): Promise<CompactionResult> {
    if (prepared.kind === 'skip') return prepared.result;
    const done = await runCompaction(prepared.plan, conversationId, deps, prepared.result, count, signal);
    guard.track(conversationId, done);
    return done;
  }

  const reconcileFirst = (conversationId: string) => atStage('reconcile_failed', () => reconcileAndReport(conversationId, deps));
  const loadLive = async (conversationId: string) => assembleContext(await atStage('unexpected', () => persistence.loadHistory(conversationId)));

  async function compactHistory(history: readonly ConversationMessage[], conversationId: string, options: CompactOptions = {}): Promise<CompactionResult> {
    const started = deps.clock();
    // Before validation `history` may be anything: the result must still be built without throwing.
    const given = Array.isArray(history) ? [...(history as ConversationMessage[])] : [];
    let result = initialResult(given, 0);
    try {
      validateHistory(history, conversationId);
      const count = countOnce(tokens);
      const force = options.force ?? false;
      const prepared = prepare(history, conversationId, count, force);
      result = prepared.result;
      if (prepared.kind === 'skip') return result;
      const locked = await persistence.withConversationLock(
        conversationId,
        async () => {
          await reconcileFirst(conversationId);
          // Another process (or a finished interrupted operation) may have archived part of the caller's history:
          // an indexed count tells, and only then are the live rows loaded to plan again.
          const ids = prepared.plan.compactable.map((m) => m.id);
          if ((await atStage('unexpected', () => persistence.countLive(conversationId, ids))) === ids.length) {
            return run(prepared, conversationId, count, options.signal);
          }
          const replanned = prepare(await loadLive(conversationId), conversationId, count, force);
          result = replanned.result;
          return run(replanned, conversationId, count, options.signal);
        },
        { wait: options.wait ?? false },
      );
      if (!locked.acquired) return Object.assign(result, { skipReason: 'busy' as const });
      result = locked.value;
      return result;
    } catch (error) {
      return Object.assign(result, { status: 'failed' as const, history: given, failureCode: failureCodeOf(error), error: errorMessage(error) });
    } finally {
      result.durationMs = deps.clock() - started;
    }
  }

  return {
    settings,
    frontier: (conversationId) => listFrontier(deps, conversationId),
    isPaused: (conversationId) => guard.isPaused(conversationId),
    resume: (conversationId) => guard.clear(conversationId),

    async reconcile(conversationId) {
      requireConversationId(conversationId);
      const locked = await persistence.withConversationLock(conversationId, () => reconcileAndReport(conversationId, deps), { wait: true });
      if (!locked.acquired) throw new MemfoldError('busy', `Conversation ${conversationId} is being compacted`);
      return locked.value;
    },

    async compactStored(conversationId, options = {}) {
      const started = deps.clock();
      let stored: ConversationMessage[];
      try {
        requireConversationId(conversationId);
        stored = await loadLive(conversationId);
      } catch (error) {
        return Object.assign(initialResult([], 0), {
          status: 'failed' as const,
          failureCode: failureCodeOf(error),
          error: errorMessage(error),
          durationMs: deps.clock() - started,
        });
      }
      // The rows read once, then the path every history takes: planned before the lock, so a turn below the
      // trigger locks and reconciles nothing; under the lock a plan made stale meanwhile is made again.
      return compactHistory(stored, conversationId, options);
    },

    compactHistory,

    async resummarizeDepth(conversationId, depth) {
      if (!Number.isInteger(depth) || depth < 0) throw new InvalidArgumentError('depth', 'must be an integer >= 0');
      const locked = await persistence.withConversationLock(conversationId, () => resummarizeDepthLocked(conversationId, depth, deps), { wait: true });
      if (!locked.acquired) throw new MemfoldError('busy', `Conversation ${conversationId} is being compacted`);
      return locked.value;
    },
  };
}
