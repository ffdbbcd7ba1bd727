/**
 * Progress of `memfold compact` on stderr: a line as each stage starts, and a bar while the chunks are
 * summarized, the part a slow model makes long. stdout is never touched, so `--json` stays pure.
 */
import type { CompactionStage } from '../compaction/compaction-result.js';
import type { MemfoldEvent } from '../memfold.js';
import { createProgressBar, type ProgressBar, type ProgressStream } from './progress.js';

const STAGE_WORDS: Record<CompactionStage, string> = {
  plan: 'planning',
  clear: 'clearing old tool outputs (archived verbatim first; placeholders in the live rows)',
  fold: 'summarizing the compactable messages, chunk by chunk',
  archive: 'archiving the summaries and the verbatim transcript',
  resummarize: 're-summarizing the oldest summaries when there are too many',
  commit: 'removing the archived messages from the live table',
};

export interface CompactionProgress {
  /** Takes every event createMemfold reports; draws the stages and the depth-0 fold, ignores the rest. */
  onEvent(event: MemfoldEvent): void;
  /** Ends a bar still open (when the compaction stopped part-way). */
  finish(): void;
}

export function createCompactionProgress(stream: ProgressStream): CompactionProgress {
  let open: { done: number; bar: ProgressBar } | undefined;
  const finish = () => {
    open?.bar.finish(undefined, open.done);
    open = undefined;
  };
  return {
    onEvent(event) {
      if (event.type === 'stage') {
        finish();
        stream.write(`compact: ${STAGE_WORDS[event.stage]}\n`);
      } else if (event.type === 'fold_progress' && event.depth === 0) {
        // Re-summarization folds one run at a time (one step each): its stage line says enough.
        open ??= { done: 0, bar: createProgressBar('chunks summarized', event.total, stream) };
        open.done = event.done;
        open.bar.update(event.done);
      }
    },
    finish,
  };
}
