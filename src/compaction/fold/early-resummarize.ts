/**
 * Re-summarizing beside the fold. A compaction's frontier is the batches before it plus one new batch per chunk, and
 * the new batches' shapes (depth, times, labels) are known before their summaries are. Once the first run the
 * re-summarize step will fold is decided by batches already archived (`decidedFirstRun`), it is folded at once,
 * concurrently with the summaries still to come, instead of after them: one model call less on the critical path.
 * The outcome is the one the step would reach afterwards: the same run, the same request.
 */
import type { ArchiveEntry, SummaryBatch } from '../../conversation/types.js';
import { decidedFirstRun, foldRun, runFits, type ResummarizeContext } from './resummarize.js';
import { atStage } from '../stage-error.js';

export interface EarlyResummarize {
  /** The new batches' labels were chosen, or one was archived: look again whether the first run is decided. */
  check(): void;
  /** The run folded early and its parent (undefined when none was decided in time); rejects with its failure. */
  finish(): Promise<{ run: ArchiveEntry[]; parent: SummaryBatch } | undefined>;
  /** Settles when the early run (if started) has, written batch and marks included; never rejects. */
  settled(): Promise<void>;
}

/**
 * `frontierNow` gives the frontier as it will be (the new batches not yet archived hold no text) and which of its
 * batches are ready, or undefined while the new batches' labels are not chosen yet. `onFailure` hears the early
 * run's failure (a StageError), to stop the fold.
 */
export function startEarlyResummarize(input: {
  frontierNow: () => { frontier: ArchiveEntry[]; ready: (batch: ArchiveEntry) => boolean } | undefined;
  ctx: ResummarizeContext;
  onFailure: (error: unknown) => void;
}): EarlyResummarize {
  const { frontierNow, ctx, onFailure } = input;
  let started: Promise<{ run: ArchiveEntry[]; parent: SummaryBatch }> | undefined;
  // Each batch is counted once, however many checks measure it.
  const fits = runFits(ctx);
  return {
    check() {
      if (started || ctx.fold.signal?.aborted) return;
      const now = frontierNow();
      const run = now && decidedFirstRun(now.frontier, now.ready, ctx, fits);
      if (!run) return;
      started = atStage('model_failed', () => foldRun(run, ctx)).then((parent) => ({ run, parent }));
      started.catch(onFailure);
    },
    finish: async () => started,
    settled: async () => {
      await started?.catch(() => undefined);
    },
  };
}
