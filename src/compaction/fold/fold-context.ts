/**
 * What a fold or a re-summarize run is given from the compaction's deps: its fold options (progress reported as
 * `fold_progress` events) and, for re-summarizing, the operation's writer. The summary a fold builds on.
 */
import type { ArchiveEntry } from '../../conversation/types.js';
import type { ArchiveWriter } from '../batches/archive-writer.js';
import type { CompactionDeps } from '../compaction-deps.js';
import { batchBody } from '../format/headers.js';
import type { FoldOptions } from './fold.js';
import type { ResummarizeContext } from './resummarize.js';

export function foldOptions(deps: CompactionDeps, conversationId: string, depth: number, signal?: AbortSignal): FoldOptions {
  return {
    summarizer: deps.summarizer,
    tokens: deps.tokens,
    maxSummaryTokens: deps.settings.maxSummaryTokens,
    ...(signal ? { signal } : {}),
    onStep: (done, total) => deps.emit({ type: 'fold_progress', conversationId, done, total, depth }),
  };
}

/** The summary a compaction's fold builds on: the newest frontier batch's text, without its header (none before the first). */
export function newestSummary(frontier: readonly ArchiveEntry[]): string | undefined {
  return frontier.length > 0 ? batchBody(frontier[frontier.length - 1]!.content) : undefined;
}

/** What re-summarization needs for one operation: its writer, and the fold options of the depth it writes. */
export function resummarizeContext(
  deps: CompactionDeps,
  ids: { conversationId: string; operationId: string },
  writer: ArchiveWriter,
  depth: number,
  signal?: AbortSignal,
): ResummarizeContext {
  return {
    ...ids,
    settings: deps.settings,
    archive: deps.archive,
    writer,
    inputBudget: deps.inputBudget,
    fold: foldOptions(deps, ids.conversationId, depth, signal),
  };
}
