/**
 * One compaction of a plan, under the conversation's lock: journal -> fold beside archive (read back) ->
 * re-summarize -> commit. Each step takes and returns values; this file only sequences them, times
 * them, and on any failure undoes the writes and returns the failure as data.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { listFrontier } from './batches/list-frontier.js';
import { readClearedOriginals } from './clearing/cleared-originals.js';
import type { StepContext } from './compaction-deps.js';
import { openOperation, timed, type CompactionOperation } from './compaction-operation.js';
import { operationUsage, type CompactionResult } from './compaction-result.js';
import { foldBesideArchive, type InFlight } from './fold-beside-archive.js';
import type { ChunkedCompactable } from './fold/fold-compactable.js';
import { resummarizeContext } from './fold/fold-context.js';
import type { FoldStep } from './fold/fold.js';
import { resummarizeFrontier } from './fold/resummarize.js';
import { commitCompacted } from './journal/commit-compacted.js';
import { commitLanded } from './journal/lost-commit.js';
import { undoOperation } from './journal/undo-operation.js';
import { countSteps } from './model-usage.js';
import type { CompactionPlan } from './plan/plan.js';
import { atStage, clientAttemptsOf, StageError, throwIfAborted } from './stage-error.js';
import { assembleContext } from './view/context-view.js';

/** What this compaction's tier 2 left to tier 3 (see `readClearedOriginals`). */
export interface Tier2Leftovers {
  /** `tool_output` entries tier 2 wrote and read back, by label. */
  entries?: ReadonlyMap<string, ArchiveEntry>;
  /** Outputs `plan` folds without their being cleared, as stored, by message id (the plan reads placeholders). */
  uncleared?: ReadonlyMap<string, ConversationMessage>;
}

export interface RunCompactionInput extends StepContext {
  plan: CompactionPlan;
  /** The chunks the plan folds (`plan/plan-run.ts`); all of it as one chunk when the application supplied the summary. */
  chunks: ChunkedCompactable;
  tier2?: Tier2Leftovers;
}

/**
 * Run `plan` and fill `result` (which holds the history before, and collects stage times and model
 * usage as the steps run). Never throws: a failure comes back as `status: 'failed'` with the writes undone.
 */
export async function runCompaction(input: RunCompactionInput): Promise<CompactionResult> {
  const { plan, conversationId, deps, result } = input;
  const operation = openOperation({ conversationId, deps, messageIds: plan.compactable.map((m) => m.id) });
  result.operationId = operation.id;
  // Archive writes run beside the fold: a failure waits for them before it undoes anything.
  const inFlight: InFlight = {};
  try {
    return compacted(input, await compactSteps(input, operation, inFlight));
  } catch (error) {
    await Promise.all([inFlight.archiving?.settled(), inFlight.early?.settled()]);
    return failed(input, operation, StageError.isInstance(error) ? error : new StageError('unexpected', error));
  }
}

/** The steps in order; returns the history as the commit left it. */
async function compactSteps(input: RunCompactionInput, operation: CompactionOperation, inFlight: InFlight): Promise<ConversationMessage[]> {
  const { plan, conversationId, deps, result, signal } = input;
  const { id: operationId, messageIds, writer } = operation;
  await atStage('unexpected', () =>
    deps.persistence.recordOperation({ id: operationId, conversationId, status: 'planned', mode: deps.settings.mode, messageIds, labels: [] }),
  );
  const before = await atStage('archive_failed', () => listFrontier(deps, conversationId));
  // Cleared tool outputs are archived as they were appended: their originals are read before any model call.
  const originals = await atStage('archive_failed', () =>
    readClearedOriginals({ messages: plan.compactable, archive: deps.archive, conversationId, ...input.tier2 }),
  );
  const chunked = deps.summarySupplied ? { chunks: [plan.compactable], historyChunks: 1, turnPrefixMessages: 0 } : input.chunks;
  result.turnPrefixMessages = chunked.turnPrefixMessages;
  const early = await foldBesideArchive({ ...input, chunked, operation, before, originals, inFlight });
  await atStage('archive_failed', () => operation.archived());

  // Re-summarize when the frontier has grown past the clip window plus its buffer.
  const onFold = (_depth: number, steps: FoldStep[]) => countSteps({ steps, result, conversationId, deps });
  const { frontier: after, created } = await timed(input, 'resummarize', () =>
    atStage('model_failed', async () =>
      resummarizeFrontier(
        [...before, ...result.batches],
        { ...resummarizeContext(deps, { conversationId, operationId }, writer, 1, signal), onFold },
        await early.finish(),
      ),
    ),
  );
  result.resummarized = created;
  throwIfAborted(signal);

  return timed(input, 'commit', () =>
    atStage('commit_failed', () =>
      commitCompacted({ conversationId, operationId, plan, frontier: after, labels: writer.written, usage: operationUsage(result) }, deps),
    ),
  );
}

function compacted(input: RunCompactionInput, history: ConversationMessage[]): CompactionResult {
  const { result, deps, counts } = input;
  result.history = assembleContext(history, deps.settings.toolOutputMaxLines);
  return Object.assign(result, {
    status: 'compacted' as const,
    messagesAfter: result.history.length,
    archivedMessages: input.plan.compactable.length,
    // Counted as tokensBefore and the trigger are: tool outputs whole (the history returned shows them cut), with
    // the factor the plan was made with (the commit dropped it: the next count starts uncalibrated).
    tokensAfter: assembleContext(history).reduce((sum, m) => sum + counts.context(m), 0),
  });
}

/** The failure as data, after undoing the operation's writes, unless its commit may have landed. */
async function failed(input: RunCompactionInput, operation: CompactionOperation, stageError: StageError): Promise<CompactionResult> {
  const { conversationId, deps, result } = input;
  const { persistence } = deps;
  const failure = (message: string) =>
    Object.assign(result, { status: 'failed' as const, failureCode: stageError.failureCode, error: message, ...clientAttemptsOf(stageError) });
  if (stageError.failureCode === 'commit_failed') {
    // Only the journal knows whether a commit that reported an error landed; undoing one that did would lose messages.
    const landed = await commitLanded(persistence, conversationId, operation.id);
    if (landed === true) {
      const history = await persistence.loadHistory(conversationId).catch(() => undefined);
      if (history) return compacted(input, history);
    }
    if (landed !== false) {
      const why = landed ? 'the commit landed but the live history could not be read back' : 'the journal could not be read to see whether the commit landed';
      return failure(`${stageError.message}; ${why}: nothing was undone (reconcile settles the operation)`);
    }
  }
  const undone = { operationId: operation.id, conversationId, messageIds: operation.messageIds };
  await undoOperation({ writer: operation.writer, operation: undone, persistence, cause: stageError.message });
  return failure(stageError.message);
}
