/**
 * The fold step of a compaction: chunk what the plan compacts and summarize chunk by chunk. Chunks are
 * measured as the summarizer reads them (each message as a transcript line with its speaker, and its date
 * unless the line before it in the chunk has the same: `renderFoldLine`),
 * so only a single unit larger than a chunk is ever cut, and in the request only. A split turn's opening is
 * folded apart (`split-turn.ts`).
 */
import type { ConversationMessage } from '../conversation/types.js';
import { chunkByTokens } from './chunk.js';
import type { CompactionDeps } from './compaction-deps.js';
import { splitTurnPrefix } from './split-turn.js';
import { foldChunkOf, foldChunks, renderFoldLine, type FoldOptions, type FoldStep } from './fold.js';

export interface FoldedChunks {
  /** The compactable messages, cut into chunks that never split a unit: the history's, then the turn prefix's. */
  chunks: ConversationMessage[][];
  /** One summary per chunk, in order. */
  steps: FoldStep[];
  /** Messages of the split turn's opening, summarized on their own (`split-turn.ts`); 0 when no turn was split. */
  turnPrefixMessages: number;
}

/**
 * Chunk and fold `compactable`. When the verbatim tail (`recent`) continues a long turn (longer than
 * `keepRecentTokens` by `contextCount`, the count the plan cut the tail with), the turn's compacted opening is
 * folded as its own chain, concurrently with the history before it (from scratch, or from the previous summary when
 * nothing precedes it); a failure in either chain stops the other.
 */
export async function foldCompactable(
  compactable: readonly ConversationMessage[],
  recent: readonly ConversationMessage[],
  previousSummary: string | undefined,
  deps: Pick<CompactionDeps, 'tokens' | 'inputBudget' | 'settings'>,
  fold: FoldOptions,
  contextCount: (m: ConversationMessage) => number,
): Promise<FoldedChunks> {
  const { tokens, inputBudget, settings } = deps;
  const lineCost = (m: ConversationMessage, previous: ConversationMessage | undefined) => tokens.count(renderFoldLine(m, previous)) + 1;
  const chunksOf = (messages: readonly ConversationMessage[]) => chunkByTokens(messages, inputBudget, lineCost);
  const foldInput = (chunks: ConversationMessage[][]) => chunks.map((chunk) => foldChunkOf(chunk, inputBudget, (t) => tokens.count(t)));

  const { history, turnPrefix } = splitTurnPrefix(compactable, recent, contextCount, settings.keepRecentTokens);
  const historyChunks = chunksOf(history);
  const prefixChunks = chunksOf(turnPrefix);
  const total = historyChunks.length + prefixChunks.length;
  let done = 0;
  const stop = new AbortController();
  const signal = fold.signal ? AbortSignal.any([fold.signal, stop.signal]) : stop.signal;
  const options: FoldOptions = { ...fold, signal, onStep: () => fold.onStep?.(++done, total) };
  const chain = (chunks: ConversationMessage[][], previous: string | undefined, prefix: boolean) =>
    foldChunks(foldInput(chunks), previous, options, prefix).catch((error: unknown) => {
      stop.abort(error);
      throw error;
    });
  const [historySteps, prefixSteps] = await Promise.all([
    chain(historyChunks, previousSummary, false),
    chain(prefixChunks, history.length === 0 ? previousSummary : undefined, true),
  ]);
  return { chunks: [...historyChunks, ...prefixChunks], steps: [...historySteps, ...prefixSteps], turnPrefixMessages: turnPrefix.length };
}
