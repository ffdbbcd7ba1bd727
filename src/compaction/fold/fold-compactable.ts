/**
 * The fold step of a compaction: chunk what the plan compacts and summarize chunk by chunk. Chunks are
 * measured as the summarizer reads them (each message as a transcript line with its speaker, and its date
 * unless the line before it in the chunk has the same: `renderFoldLine`),
 * so only a single unit larger than a chunk is ever cut, and in the request only. A split turn's opening is
 * folded apart (`split-turn.ts`).
 */
import type { ConversationMessage } from '../../conversation/types.js';
import { chunkByTokens } from './chunk.js';
import type { CompactionDeps } from '../compaction-deps.js';
import { splitTurnPrefix } from '../plan/split-turn.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { foldChunkOf, foldChunks, renderFoldLine, type FoldChunk, type FoldOptions, type FoldStep } from './fold.js';

export interface ChunkedCompactable {
  /** The compactable messages, cut into chunks that never split a unit: the history's, then the turn prefix's. */
  chunks: ConversationMessage[][];
  /** How many of `chunks` are the history's; the rest are the split turn's opening. */
  historyChunks: number;
  /** Messages of the split turn's opening, summarized on their own (`split-turn.ts`); 0 when no turn was split. */
  turnPrefixMessages: number;
}

/**
 * Chunk `compactable`, pure. When the verbatim tail (`recent`) continues a long turn (longer than
 * `keepRecentTokens` by `contextCount`, the count the plan cut the tail with), the turn's compacted opening gets
 * chunks of its own, after the history's.
 */
export function chunkCompactable(input: {
  compactable: readonly ConversationMessage[];
  recent: readonly ConversationMessage[];
  deps: Pick<CompactionDeps, 'tokens' | 'inputBudget' | 'stretchBudget' | 'settings'>;
  contextCount: (m: ConversationMessage) => number;
}): ChunkedCompactable {
  const { compactable, recent, deps, contextCount } = input;
  const { tokens, inputBudget, stretchBudget, settings } = deps;
  const lineCost = (m: ConversationMessage, previous: ConversationMessage | undefined) => tokens.count(renderFoldLine(m, previous)) + 1;
  const chunksOf = (messages: readonly ConversationMessage[]) => chunkByTokens(messages, inputBudget, lineCost, stretchBudget);
  const { history, turnPrefix } = splitTurnPrefix(compactable, recent, contextCount, settings.keepRecentTokens);
  const historyChunks = chunksOf(history);
  return { chunks: [...historyChunks, ...chunksOf(turnPrefix)], historyChunks: historyChunks.length, turnPrefixMessages: turnPrefix.length };
}

/**
 * Fold the chunks: the history's chain, and the turn opening's chain concurrently with it (from scratch, or from
 * the previous summary when no history precedes it); a failure in either chain stops the other. `onSummary` hears
 * each chunk's summary as it arrives (by its index in `chunks`), so its batch can be archived while the rest fold.
 */
export async function foldChunked(input: {
  chunked: ChunkedCompactable;
  previousSummary: string | undefined;
  deps: Pick<CompactionDeps, 'tokens' | 'stretchBudget'>;
  fold: FoldOptions;
  onSummary?: (chunkIndex: number, step: FoldStep) => void;
}): Promise<FoldStep[]> {
  const { chunked, previousSummary, deps, fold, onSummary = () => undefined } = input;
  const { tokens, stretchBudget } = deps;
  const { chunks, historyChunks } = chunked;
  // A chunk that took in a remainder may hold up to the stretch budget; only a single larger unit is cut. Each chunk's
  // lines are made when its request is, not all before the first.
  const foldInput = (part: ConversationMessage[][]) => ({ length: part.length, at: (i: number) => foldInputOf(part[i]!, stretchBudget, tokens) });
  let done = 0;
  const stop = new AbortController();
  const signal = fold.signal ? AbortSignal.any([fold.signal, stop.signal]) : stop.signal;
  const options: FoldOptions = { ...fold, signal, onStep: () => fold.onStep?.(++done, chunks.length) };
  const chain = (first: number, end: number, previous: string | undefined, prefix: boolean) =>
    foldChunks(foldInput(chunks.slice(first, end)), previous, options, prefix, (i, step) => onSummary(first + i, step)).catch((error: unknown) => {
      stop.abort(error);
      throw error;
    });
  const [historySteps, prefixSteps] = await Promise.all([
    chain(0, historyChunks, previousSummary, false),
    chain(historyChunks, chunks.length, historyChunks === 0 ? previousSummary : undefined, true),
  ]);
  return [...historySteps, ...prefixSteps];
}

const foldInputs = new WeakMap<readonly ConversationMessage[], { budget: number; tokens: TokenCounter; input: FoldChunk }>();

/**
 * A chunk's summarizer lines (`foldChunkOf`), made once per chunk, budget and counter: the early fold and the
 * compaction fold the same chunks, and both the work (a transcript rendered and counted) and the lines themselves
 * are shared, so the early fold knows its request by the lines' identity (`early-fold.ts`).
 */
export function foldInputOf(chunk: readonly ConversationMessage[], budget: number, tokens: TokenCounter): FoldChunk {
  const known = foldInputs.get(chunk);
  if (known && known.budget === budget && known.tokens === tokens) return known.input;
  const input = foldChunkOf(chunk, budget, (t) => tokens.count(t));
  foldInputs.set(chunk, { budget, tokens, input });
  return input;
}
