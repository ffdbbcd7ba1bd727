/**
 * The orchestrator: decide -> plan -> chunk -> fold -> archive -> re-summarize -> commit -> return.
 * Talks to ports only. `compress` never throws: every failure comes back as a result with the
 * original history, after undoing whatever it had written to the archive.
 */
import { randomUUID } from 'node:crypto';
import type { ArchiveEntry, ConversationMessage, SummaryBatch } from '../conversation/types.js';
import { validateHistory } from '../conversation/validate-history.js';
import { resolveCompactionSettings, type CompactionSettings } from './compaction-settings.js';
import { InvalidArgumentError, MemfoldError, errorMessage } from '../errors.js';
import type { MemoryManager } from '../memory/memory-manager.js';
import type { ModelProvider } from '../model/model-provider.js';
import type { OperationStatus, PersistenceProvider } from '../persistence/persistence-provider.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { createArchiveWriter, ReadbackError, type ArchiveWriter } from './archive-writer.js';
import { baseLabels, buildBatches } from './batch-builder.js';
import { chunkByTokens, clipText } from './chunk.js';
import { buildClipArchive } from './clip-archive.js';
import { initialResult, type CompactionEvent, type CompactionFailureCode, type CompactionResult, type CompactionStage } from './compaction-result.js';
import { assembleContext } from './context-view.js';
import { foldChunkOf, foldChunks, promptOverhead, type FoldOptions, type FoldStep } from './fold.js';
import { batchBody } from './headers.js';
import { planCompaction, type CompactionPlan, type PlanOutcome } from './plan.js';
import { reconcileConversation, type ReconcileOutcome } from './reconcile.js';
import { resummarizeFrontier, foldRun, type ResummarizeContext } from './resummarize.js';
import { replaceRun } from './frontier.js';
import { buildTranscriptSegments } from './transcript-segments.js';
import { renderMessage } from './transcript-format.js';

export interface CompactorOptions {
  model: ModelProvider;
  memory: MemoryManager;
  persistence: PersistenceProvider;
  tokens: TokenCounter;
  settings?: Partial<CompactionSettings>;
  clock?: () => number;
  newId?: () => string;
  onEvent?: (event: CompactionEvent) => void;
}

export interface CompressOptions {
  /** Compact even below the trigger. */
  force?: boolean;
  /** Wait for another compaction of the same conversation instead of skipping with `busy`. */
  wait?: boolean;
  signal?: AbortSignal;
}

export interface ResummarizeResult {
  created: SummaryBatch[];
  clipArchive: string;
}

export interface Compactor {
  readonly settings: CompactionSettings;
  compress(history: readonly ConversationMessage[], conversationId: string, options?: CompressOptions): Promise<CompactionResult>;
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

/** Compactions in a row that leave the context at or over the trigger before automatic compaction pauses. */
export const LOOP_GUARD_LIMIT = 2;

/** A failure at a known stage; anything else is `unexpected`. */
class StageError extends Error {
  constructor(readonly code: CompactionFailureCode, readonly original: unknown) {
    super(errorMessage(original));
  }
}

/** Failures whose origin the error itself tells, wherever in the pipeline they happen (re-summarization both folds and writes). */
function failureOrigin(error: unknown): CompactionFailureCode | undefined {
  if (error instanceof ReadbackError) return 'readback_failed';
  if (!MemfoldError.isInstance(error)) return undefined;
  if (error.code === 'archive_error' || error.code === 'embedding_error') return 'archive_failed';
  if (error.code === 'model_error') return 'model_failed';
  return undefined;
}

async function atStage<T>(code: CompactionFailureCode, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StageError) throw error;
    throw new StageError(failureOrigin(error) ?? code, error);
  }
}

export function createCompactor(options: CompactorOptions): Compactor {
  const settings = resolveCompactionSettings(options.settings);
  const { model, memory, persistence, tokens } = options;
  const clock = options.clock ?? Date.now;
  const newId = options.newId ?? randomUUID;
  const emit = (event: CompactionEvent) => options.onEvent?.(event);
  const countMessage = (m: ConversationMessage) => tokens.countMessage(m);
  /** A counter for one compress call: plan, chunks and transcript segments count each message once. */
  const countOnce = () => {
    const seen = new WeakMap<ConversationMessage, number>();
    return (m: ConversationMessage) => seen.get(m) ?? seen.set(m, countMessage(m)).get(m)!;
  };

  /** Tokens the transcript part of one summarizer request may take. */
  const systemTokens = tokens.count(promptOverhead(model, settings.maxSummaryTokens));
  const windowShare = Math.floor(model.contextWindow * settings.summarizerInputShare);
  const inputBudget = Math.min(settings.chunkTokens, windowShare - systemTokens - 2 * settings.maxSummaryTokens - 64);
  if (!(inputBudget >= 64)) {
    throw new MemfoldError('invalid_config', `Invalid config field compaction.summarizerInputShare: the summarizer window (${model.contextWindow}) leaves no room for a chunk`);
  }

  function foldOptions(conversationId: string, depth: number, signal?: AbortSignal): FoldOptions {
    return {
      model,
      tokens,
      maxSummaryTokens: settings.maxSummaryTokens,
      ...(signal ? { signal } : {}),
      onStep: (done, total) => emit({ type: 'fold_progress', conversationId, done, total, depth }),
    };
  }

  /** `list` is time-ordered by the port's contract. */
  function frontier(conversationId: string): Promise<ArchiveEntry[]> {
    return memory.list({ conversationId, kind: 'summary', unmarkedOnly: true });
  }

  async function run(
    plan: CompactionPlan,
    conversationId: string,
    result: CompactionResult,
    count: (m: ConversationMessage) => number,
    signal?: AbortSignal,
  ): Promise<CompactionResult> {
    const operationId = newId();
    result.operationId = operationId;
    const messageIds = plan.compactable.map((m) => m.id);
    let status: OperationStatus = 'planned';
    // The journal: every label is on the operation row before it is written (see reconcile.ts).
    const journal = (labels: string[]) => persistence.updateOperation({ id: operationId, conversationId, status, labels });
    const writer = createArchiveWriter(memory, conversationId, operationId, journal);
    const timed = async <T>(stage: CompactionStage, work: () => Promise<T>): Promise<T> => {
      emit({ type: 'stage', conversationId, stage });
      const t0 = clock();
      try {
        return await work();
      } finally {
        result.stageMs[stage] = (result.stageMs[stage] ?? 0) + clock() - t0;
      }
    };
    const countSteps = (steps: FoldStep[]) => {
      for (const step of steps) {
        result.modelCalls++;
        result.summarizerInputTokens += step.summary.usage.inputTokens;
        result.summarizerOutputTokens += step.summary.usage.outputTokens;
        if (step.summary.fallback) {
          result.fallbacks.push(step.summary.fallback);
          emit({ type: 'fallback', conversationId, ...step.summary.fallback });
        }
      }
    };

    try {
      await atStage('unexpected', () =>
        persistence.recordOperation({ id: operationId, conversationId, status: 'planned', messageIds, labels: [] }),
      );
      const before = await atStage('archive_failed', () => frontier(conversationId));

      // Chunk by what the summarizer reads: each message as a transcript line, date and speaker included.
      // Then only a single unit larger than a chunk is ever cut, and in the request only.
      const lineCost = (m: ConversationMessage) => tokens.count(renderMessage(m)) + 1;
      const chunks = chunkByTokens(plan.compactable, inputBudget, lineCost);
      const foldInput = chunks.map((chunk) => foldChunkOf(chunk, inputBudget, (t) => tokens.count(t)));
      const previous = before.length > 0 ? batchBody(before[before.length - 1]!.content) : undefined;
      const steps = await timed('fold', () =>
        atStage('model_failed', () => foldChunks(foldInput, previous, foldOptions(conversationId, 0, signal))),
      );
      countSteps(steps);
      if (signal?.aborted) throw new StageError('aborted', signal.reason);

      // Archive the depth-0 batches and the verbatim transcript, then read them back.
      const drafts = chunks.map((chunk, i) => ({
        depth: 0,
        summary: steps[i]!.text,
        sourceTimes: chunk.map((m) => m.createdAt),
        sourceIds: chunk.map((m) => m.id),
      }));
      const batches = await timed('archive', () =>
        atStage('archive_failed', async () => {
          const build = (taken: ReadonlySet<string>) => {
            const built = buildBatches(conversationId, operationId, drafts, taken);
            const segments = chunks.flatMap((chunk, i) =>
              buildTranscriptSegments(chunk, {
                conversationId, parentLabel: built[i]!.label, operationId, taken,
                segmentTokens: settings.transcriptSegmentTokens, countMessage: count,
              }),
            );
            return { built, entries: [...built, ...segments] };
          };
          // Labels are chosen so that no write lands on a label another operation holds.
          let labelled = build(new Set());
          const taken = new Set((await memory.read(conversationId, labelled.entries.map((e) => e.label))).map((e) => e.label));
          if (taken.size > 0) labelled = build(taken);
          await writer.writeVerified(labelled.entries);
          return labelled.built;
        }),
      );
      result.batches = batches;
      status = 'archived';
      await atStage('archive_failed', () => journal([...writer.written]));

      // Re-summarize when the frontier has grown past the clip window plus its buffer.
      const ctx: ResummarizeContext = {
        conversationId, operationId, settings, memory, writer, inputBudget,
        fold: foldOptions(conversationId, 1, signal),
        onFold: (_depth, s) => countSteps(s),
      };
      const { frontier: after, created } = await timed('resummarize', () =>
        atStage('model_failed', () => resummarizeFrontier([...before, ...batches], ctx)),
      );
      result.resummarized = created;
      if (signal?.aborted) throw new StageError('aborted', signal.reason);

      // Commit: delete exactly the archived ids and store the new clip-archive, in one transaction.
      const clipArchive = buildClipArchive(after, settings.clipFirst, settings.clipLast);
      const committed = await timed('commit', () =>
        atStage('commit_failed', () =>
          persistence.commitCompaction({ conversationId, operationId, deleteIds: messageIds, clipArchive, labels: [...writer.written] }),
        ),
      );
      const history = [...plan.system, committed.clipArchive, ...plan.firstTurns, ...plan.recent];
      result.history = assembleContext(history, settings.toolOutputMaxLines);
      Object.assign(result, {
        status: 'compacted', compacted: true,
        messagesAfter: result.history.length,
        archivedMessages: messageIds.length,
        tokensAfter: result.history.reduce((sum, m) => sum + count(m), 0),
      });
      return result;
    } catch (error) {
      const stageError = error instanceof StageError ? error : new StageError('unexpected', error);
      await undo(writer, operationId, conversationId, messageIds, stageError);
      return Object.assign(result, { status: 'failed', failed: true, failureCode: stageError.code, error: stageError.message });
    }
  }

  /**
   * Undo the archive writes. When the undo itself fails, the operation goes back to `planned` so that
   * reconcile (before the next compaction, or on open) removes what is left.
   */
  async function undo(writer: ArchiveWriter, operationId: string, conversationId: string, messageIds: string[], cause: StageError) {
    const errors = await writer.rollback();
    const complete = errors.length === 0;
    const note = complete ? '' : `; undo incomplete, left for reconcile: ${errors.map(errorMessage).join('; ')}`;
    await persistence
      .recordOperation({ id: operationId, conversationId, status: complete ? 'rolled_back' : 'planned', messageIds, labels: [...writer.written], error: cause.message + note })
      .catch(() => undefined);
  }

  const reconcileDeps = { memory, persistence, settings };
  /** Finish or undo what a crash left, then make sure the plan covers only rows that are still live. */
  async function recoverAndReplan(
    plan: CompactionPlan,
    conversationId: string,
    count: (m: ConversationMessage) => number,
    force: boolean,
  ): Promise<{ outcome: PlanOutcome; stored?: ConversationMessage[] }> {
    const outcomes = await atStage('reconcile_failed', () => reconcileConversation(conversationId, reconcileDeps));
    for (const outcome of outcomes) emit({ type: 'reconciled', ...outcome });
    // Another process (or a finished interrupted operation) may have archived part of the caller's history:
    // an indexed count tells, and only then are the live rows loaded to plan again.
    const ids = plan.compactable.map((m) => m.id);
    if ((await atStage('unexpected', () => persistence.countLive(conversationId, ids))) === ids.length) return { outcome: plan };
    const stored = await atStage('unexpected', () => persistence.loadHistory(conversationId));
    return { outcome: planCompaction(stored, settings, count, { force }), stored };
  }

  const ineffective = new Map<string, number>();
  /** The loop guard: count compactions that leave the context at or over the trigger; pause at the limit. */
  function track(conversationId: string, result: CompactionResult): void {
    if (result.compacted && result.tokensAfter < settings.trigger) {
      ineffective.delete(conversationId);
      return;
    }
    const streak = (ineffective.get(conversationId) ?? 0) + 1;
    ineffective.set(conversationId, streak);
    if (streak === LOOP_GUARD_LIMIT) {
      const why = result.failed ? `failed (${result.failureCode})` : `left ${result.tokensAfter} tokens`;
      emit({
        type: 'auto_compaction_paused', conversationId, tokens: result.tokensAfter, trigger: settings.trigger,
        reason: `${LOOP_GUARD_LIMIT} compactions in a row did not bring the context under the trigger (${settings.trigger} tokens; the last ${why}); automatic compaction is paused for this conversation, forced compaction still runs`,
      });
    }
  }

  return {
    settings,
    frontier,
    isPaused: (conversationId) => (ineffective.get(conversationId) ?? 0) >= LOOP_GUARD_LIMIT,
    resume: (conversationId) => void ineffective.delete(conversationId),

    async reconcile(conversationId) {
      if (typeof conversationId !== 'string' || conversationId.length === 0) throw new InvalidArgumentError('conversationId', 'must be a non-empty string');
      const locked = await persistence.withConversationLock(conversationId, () => reconcileConversation(conversationId, reconcileDeps), { wait: true });
      if (!locked.acquired) throw new MemfoldError('busy', `Conversation ${conversationId} is being compacted`);
      for (const outcome of locked.value) emit({ type: 'reconciled', ...outcome });
      return locked.value;
    },

    async compress(history, conversationId, compressOptions = {}) {
      const started = clock();
      // Before validation `history` may be anything: the result must still be built without throwing.
      let result = initialResult(Array.isArray(history) ? history : [], 0);
      try {
        validateHistory(history, conversationId);
        const count = countOnce();
        const force = compressOptions.force ?? false;
        const outcome = planCompaction(history, settings, count, { force });
        result = initialResult(history, outcome.tokensBefore);
        const threshold = Math.floor(settings.contextWindow * settings.warnAt);
        if (outcome.tokensBefore >= threshold) emit({ type: 'context_warning', conversationId, tokens: outcome.tokensBefore, threshold });
        if (outcome.kind === 'skip') {
          if (outcome.reason === 'below_trigger') ineffective.delete(conversationId);
          return Object.assign(result, { skipReason: outcome.reason });
        }
        if (!force && (ineffective.get(conversationId) ?? 0) >= LOOP_GUARD_LIMIT) return Object.assign(result, { skipReason: 'paused' as const });

        const locked = await persistence.withConversationLock(
          conversationId,
          async () => {
            const { outcome: plan, stored } = await recoverAndReplan(outcome, conversationId, count, force);
            if (stored) result = initialResult(stored, plan.tokensBefore);
            if (plan.kind === 'skip') return Object.assign(result, { skipReason: plan.reason });
            const done = await run(plan, conversationId, result, count, compressOptions.signal);
            track(conversationId, done);
            return done;
          },
          { wait: compressOptions.wait ?? false },
        );
        if (!locked.acquired) return Object.assign(result, { skipReason: 'busy' as const });
        return locked.value;
      } catch (error) {
        const code: CompactionFailureCode =
          error instanceof InvalidArgumentError ? 'invalid_input' : error instanceof StageError ? error.code : 'unexpected';
        return Object.assign(result, { status: 'failed', failed: true, history: [...(Array.isArray(history) ? history : [])], failureCode: code, error: errorMessage(error) });
      } finally {
        result.durationMs = clock() - started;
      }
    },

    async resummarizeDepth(conversationId, depth) {
      if (!Number.isInteger(depth) || depth < 0) throw new InvalidArgumentError('depth', 'must be an integer >= 0');
      const locked = await persistence.withConversationLock(conversationId, async () => {
        for (const outcome of await reconcileConversation(conversationId, reconcileDeps)) emit({ type: 'reconciled', ...outcome });
        const current = await frontier(conversationId);
        const run = current.filter((b) => b.depth === depth);
        if (run.length < 2) throw new InvalidArgumentError('depth', `needs at least 2 frontier batches of depth ${depth} (found ${run.length})`);
        const operationId = newId();
        // Journaled like a compaction that covers no messages: a crash leaves it `planned`, and reconcile undoes it.
        await persistence.recordOperation({ id: operationId, conversationId, status: 'planned', messageIds: [], labels: [] });
        const journal = (labels: string[]) => persistence.updateOperation({ id: operationId, conversationId, status: 'planned', labels });
        const writer = createArchiveWriter(memory, conversationId, operationId, journal);
        const ctx: ResummarizeContext = {
          conversationId, operationId, settings, memory, writer, inputBudget, fold: foldOptions(conversationId, depth + 1),
        };
        try {
          const parent = await foldRun(run, ctx);
          const clipArchive = buildClipArchive(replaceRun(current, run, parent), settings.clipFirst, settings.clipLast);
          await persistence.commitCompaction({ conversationId, operationId, deleteIds: [], clipArchive, labels: [...writer.written] });
          return { created: [parent], clipArchive };
        } catch (error) {
          await undo(writer, operationId, conversationId, [], new StageError('unexpected', error));
          throw error;
        }
      }, { wait: true });
      if (!locked.acquired) throw new MemfoldError('busy', `Conversation ${conversationId} is being compacted`);
      return locked.value;
    },
  };
}
