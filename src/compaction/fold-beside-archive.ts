/**
 * Tier 3's fold beside its archive writes. The fold, its first chunk building on the newest frontier batch, runs while
 * the archive takes the verbatim transcript at once and each chunk's batch as its summary arrives (all read back); an
 * archive failure stops the fold. The first re-summarize run starts as soon as the archived batches decide it.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { startChunkArchive, type ChunkArchive } from './batches/chunk-archive.js';
import type { ClearedOriginal } from './clearing/cleared-originals.js';
import type { StepContext } from './compaction-deps.js';
import { timed, type CompactionOperation } from './compaction-operation.js';
import { startEarlyResummarize, type EarlyResummarize } from './fold/early-resummarize.js';
import { foldChunked, type ChunkedCompactable } from './fold/fold-compactable.js';
import { foldOptions, newestSummary, resummarizeContext } from './fold/fold-context.js';
import type { FoldStep } from './fold/fold.js';
import { countSteps } from './model-usage.js';
import type { CompactionPlan } from './plan/plan.js';
import { atStage, StageError, throwIfAborted } from './stage-error.js';

/** What runs beside the fold: a failure waits for it before it undoes anything. */
export interface InFlight {
  archiving?: ChunkArchive;
  early?: EarlyResummarize;
}

export interface FoldBesideArchiveInput extends StepContext {
  plan: CompactionPlan;
  chunked: ChunkedCompactable;
  operation: CompactionOperation;
  /** The frontier before this compaction. */
  before: readonly ArchiveEntry[];
  /** The originals of the cleared outputs the plan folds, by message id (`readClearedOriginals`). */
  originals: ReadonlyMap<string, ClearedOriginal>;
  /** Told of the archive writes and the early re-summarize run as soon as they start. */
  inFlight: InFlight;
}

/** Fold and archive `chunked`; `result.batches` holds the batches written. Returns the early re-summarize run. */
export async function foldBesideArchive(input: FoldBesideArchiveInput): Promise<EarlyResummarize> {
  const { chunked, operation, before, conversationId, deps, result, counts, signal, inFlight } = input;
  const stopFold = new AbortController();
  const foldSignal = signal ? AbortSignal.any([signal, stopFold.signal]) : stopFold.signal;
  const ids = { conversationId, operationId: operation.id };
  const fromBefore = new Set(before.map((b) => b.label));
  let archive: ChunkArchive | undefined;
  const early = startEarlyResummarize({
    frontierNow: () => {
      const planned = archive?.planned();
      if (!planned) return undefined;
      return { frontier: [...before, ...planned.batches], ready: (b) => fromBefore.has(b.label) || planned.archived.has(b.label) };
    },
    ctx: {
      ...resummarizeContext(deps, ids, operation.writer, 1, foldSignal),
      onFold: (_depth: number, steps: FoldStep[]) => countSteps({ steps, result, conversationId, deps }),
    },
    onFailure: (error) => stopFold.abort(error),
  });
  inFlight.early = early;
  const target = { ...ids, writer: operation.writer, originals: input.originals, sessionOf: (m: ConversationMessage) => input.plan.sessionOf.get(m.id) };
  const chunkArchive = startChunkArchive({
    chunks: chunked.chunks,
    target,
    deps,
    countMessage: counts.message,
    onFailure: (error) => stopFold.abort(new StageError('archive_failed', error)),
    onPlanned: () => early.check(),
  });
  archive = chunkArchive;
  inFlight.archiving = chunkArchive;
  const fold = foldOptions(deps, conversationId, 0, foldSignal);
  const steps = await timed(input, 'fold', () =>
    atStage('model_failed', () =>
      foldChunked({ chunked, previousSummary: newestSummary(before), deps, fold, onSummary: (i, step) => chunkArchive.summarized(i, step.text) }),
    ).catch(async (error: unknown) => {
      // A write or the early re-summarize that failed stopped the fold: that failure is the cause. Either way the
      // early run stops too, and the undo waits for everything in flight.
      const cause: unknown = stopFold.signal.aborted ? stopFold.signal.reason : error;
      stopFold.abort(cause);
      await Promise.all([chunkArchive.settled(), early.settled()]);
      throw cause;
    }),
  );
  countSteps({ steps, result, conversationId, deps });
  throwIfAborted(signal);
  // What is left of the archive writes once the last summary is in (the rest ran beside the fold).
  result.batches = await timed(input, 'archive', () => atStage('archive_failed', () => chunkArchive.finish()));
  early.check();
  return early;
}
