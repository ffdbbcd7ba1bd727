/**
 * One compaction of a plan, under the conversation's lock: journal -> fold -> archive (read back) ->
 * re-summarize -> commit. Each step takes and returns values; this file only sequences them, times
 * them, and on any failure undoes the writes and returns the failure as data.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { costOfModels } from '../cost/cost-of.js';
import { DEFAULT_PRICES } from '../cost/default-prices.js';
import type { OperationStatus } from '../persistence/persistence-provider.js';
import { startChunkArchive, type ChunkArchive } from './batches/chunk-archive.js';
import { createArchiveWriter } from './batches/archive-writer.js';
import { commitCompacted } from './journal/commit-compacted.js';
import { HOOK_SUMMARIZER_ID } from './compaction-hooks.js';
import { foldOptions, listFrontier, newestSummary, resummarizeContext, type CompactionDeps, type ConversationCounts } from './compaction-deps.js';
import { operationUsage, type CompactionResult, type CompactionStage } from './compaction-result.js';
import { assembleContext } from './view/context-view.js';
import { chunkCompactable, foldChunked } from './fold/fold-compactable.js';
import type { FoldStep } from './fold/fold.js';
import { readClearedOriginals } from './clearing/cleared-originals.js';
import type { CompactionPlan } from './plan/plan.js';
import { resummarizeFrontier } from './fold/resummarize.js';
import { startEarlyResummarize, type EarlyResummarize } from './fold/early-resummarize.js';
import { atStage, clientAttemptsOf, StageError, throwIfAborted } from './stage-error.js';
import { undoOperation } from './journal/undo-operation.js';
import { commitLanded } from './journal/lost-commit.js';

/**
 * Run `plan` and fill `result` (which holds the history before, and collects stage times and model
 * usage as the steps run). Never throws: a failure comes back as `status: 'failed'` with the writes undone.
 */
export async function runCompaction(
  plan: CompactionPlan,
  conversationId: string,
  deps: CompactionDeps,
  result: CompactionResult,
  counts: ConversationCounts,
  signal?: AbortSignal,
  /** What this compaction's tier 2 left to tier 3 (see `readClearedOriginals`). */
  tier2: {
    /** `tool_output` entries tier 2 wrote and read back, by label. */
    entries?: ReadonlyMap<string, ArchiveEntry>;
    /** Outputs `plan` folds without their being cleared, as stored, by message id (the plan reads placeholders). */
    uncleared?: ReadonlyMap<string, ConversationMessage>;
  } = {},
): Promise<CompactionResult> {
  const { persistence, settings, emit, clock } = deps;
  const operationId = deps.newId();
  result.operationId = operationId;
  const messageIds = plan.compactable.map((m) => m.id);
  let status: OperationStatus = 'planned';
  // The journal: every label is on the operation row before it is written (see reconcile.ts).
  const journal = (labels: string[]) => persistence.updateOperation({ id: operationId, conversationId, status, labels });
  const writer = createArchiveWriter(deps.archive, conversationId, operationId, journal);
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
      if (!result.models.includes(step.summary.model)) result.models.push(step.summary.model);
      // A summary the application supplied took no call.
      if (step.summary.model === HOOK_SUMMARIZER_ID) continue;
      result.modelCalls++;
      result.summarizerInputTokens += step.summary.usage.inputTokens;
      result.summarizerOutputTokens += step.summary.usage.outputTokens;
      const used = result.usageByModel[step.summary.model] ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
      result.usageByModel[step.summary.model] = used;
      used.calls++;
      used.inputTokens += step.summary.usage.inputTokens;
      used.outputTokens += step.summary.usage.outputTokens;
      result.costUsd = costOfModels(result.usageByModel, deps.prices ?? DEFAULT_PRICES).usd;
      if (step.summary.fallback) {
        result.fallbacks.push(step.summary.fallback);
        emit({ type: 'fallback', conversationId, ...step.summary.fallback });
      }
    }
  };

  const compacted = (history: ConversationMessage[]): CompactionResult => {
    result.history = assembleContext(history, settings.toolOutputMaxLines);
    return Object.assign(result, {
      status: 'compacted' as const,
      messagesAfter: result.history.length,
      archivedMessages: messageIds.length,
      // Counted as tokensBefore and the trigger are: tool outputs whole (the history returned shows them cut), with
      // the factor the plan was made with (the commit dropped it: the next count starts uncalibrated).
      tokensAfter: assembleContext(history).reduce((sum, m) => sum + counts.context(m), 0),
    });
  };

  // Archive writes run beside the fold: a failure waits for them before it undoes anything.
  let archiving: ChunkArchive | undefined;
  let early: EarlyResummarize | undefined;
  try {
    await atStage('unexpected', () =>
      persistence.recordOperation({ id: operationId, conversationId, status: 'planned', mode: settings.mode, messageIds, labels: [] }),
    );
    const before = await atStage('archive_failed', () => listFrontier(deps, conversationId));
    // Cleared tool outputs are archived as they were appended: their originals are read before any model call.
    const originals = await atStage('archive_failed', () =>
      readClearedOriginals(plan.compactable, deps.archive, conversationId, tier2.entries, tier2.uncleared),
    );

    // Fold, the first chunk building on the newest frontier batch, while the archive takes the verbatim transcript
    // at once and each chunk's batch as its summary arrives (all read back). An archive failure stops the fold.
    const chunked = deps.summarySupplied
      ? { chunks: [plan.compactable], historyChunks: 1, turnPrefixMessages: 0 }
      : chunkCompactable(plan.compactable, plan.recent, deps, counts.context);
    result.turnPrefixMessages = chunked.turnPrefixMessages;
    const stopFold = new AbortController();
    const target = { conversationId, operationId, writer, originals, sessionOf: (m: ConversationMessage) => plan.sessionOf.get(m.id) };
    const foldSignal = signal ? AbortSignal.any([signal, stopFold.signal]) : stopFold.signal;
    const resummarizing = resummarizeContext(deps, { conversationId, operationId }, writer, 1, foldSignal);
    // The first re-summarize run starts as soon as the archived batches decide it, beside the rest of the fold.
    const fromBefore = new Set(before.map((b) => b.label));
    early = startEarlyResummarize(
      () => {
        const planned = chunkArchive.planned();
        if (!planned) return undefined;
        return { frontier: [...before, ...planned.batches], ready: (b) => fromBefore.has(b.label) || planned.archived.has(b.label) };
      },
      { ...resummarizing, onFold: (_depth, steps) => countSteps(steps) },
      (error) => stopFold.abort(error),
    );
    const earlyRun = early;
    archiving = startChunkArchive(
      chunked.chunks,
      target,
      deps,
      counts.message,
      (error) => stopFold.abort(new StageError('archive_failed', error)),
      () => earlyRun.check(),
    );
    const chunkArchive = archiving;
    const previous = newestSummary(before);
    const steps = await timed('fold', () =>
      atStage('model_failed', () =>
        foldChunked(chunked, previous, deps, foldOptions(deps, conversationId, 0, foldSignal), (i, step) => chunkArchive.summarized(i, step.text)),
      ).catch(async (error: unknown) => {
        // A write or the early re-summarize that failed stopped the fold: that failure is the cause. Either way the
        // early run stops too, and the undo waits for everything in flight.
        const cause: unknown = stopFold.signal.aborted ? stopFold.signal.reason : error;
        stopFold.abort(cause);
        await Promise.all([chunkArchive.settled(), earlyRun.settled()]);
        throw cause;
      }),
    );
    countSteps(steps);
    throwIfAborted(signal);

    // What is left of the archive writes once the last summary is in (the rest ran beside the fold).
    result.batches = await timed('archive', () => atStage('archive_failed', () => chunkArchive.finish()));
    earlyRun.check();
    status = 'archived';
    await atStage('archive_failed', () => journal([...writer.written]));

    // Re-summarize when the frontier has grown past the clip window plus its buffer.
    const { frontier: after, created } = await timed('resummarize', () =>
      atStage('model_failed', async () =>
        resummarizeFrontier(
          [...before, ...result.batches],
          { ...resummarizeContext(deps, { conversationId, operationId }, writer, 1, signal), onFold: (_depth, steps) => countSteps(steps) },
          await earlyRun.finish(),
        ),
      ),
    );
    result.resummarized = created;
    throwIfAborted(signal);

    const history = await timed('commit', () =>
      atStage('commit_failed', () =>
        commitCompacted({ conversationId, operationId, plan, frontier: after, labels: writer.written, usage: operationUsage(result) }, deps),
      ),
    );
    return compacted(history);
  } catch (error) {
    await Promise.all([archiving?.settled(), early?.settled()]);
    const stageError = StageError.isInstance(error) ? error : new StageError('unexpected', error);
    const failed = (message: string) =>
      Object.assign(result, { status: 'failed' as const, failureCode: stageError.failureCode, error: message, ...clientAttemptsOf(stageError) });
    if (stageError.failureCode === 'commit_failed') {
      // Only the journal knows whether a commit that reported an error landed; undoing one that did would lose messages.
      const landed = await commitLanded(persistence, conversationId, operationId);
      if (landed === true) {
        const history = await persistence.loadHistory(conversationId).catch(() => undefined);
        if (history) return compacted(history);
      }
      if (landed !== false) {
        const why = landed ? 'the commit landed but the live history could not be read back' : 'the journal could not be read to see whether the commit landed';
        return failed(`${stageError.message}; ${why}: nothing was undone (reconcile settles the operation)`);
      }
    }
    await undoOperation(writer, { operationId, conversationId, messageIds }, persistence, stageError.message);
    return failed(stageError.message);
  }
}
