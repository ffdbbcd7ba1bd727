/**
 * The fold step of a compaction: chunk what the plan compacts and summarize chunk by chunk. Chunks are
 * measured as the summarizer reads them (each message as a transcript line, date and speaker included),
 * so only a single unit larger than a chunk is ever cut, and in the request only.
 */
import type { ConversationMessage } from '../conversation/types.js';
import { chunkByTokens } from './chunk.js';
import type { CompactionDeps } from './compaction-deps.js';
import { foldChunkOf, foldChunks, type FoldOptions, type FoldStep } from './fold.js';
import { renderMessage } from './transcript-format.js';

export interface FoldedChunks {
  /** The compactable messages, cut into chunks that never split a unit. */
  chunks: ConversationMessage[][];
  /** One summary per chunk, in order. */
  steps: FoldStep[];
}

export async function foldCompactable(
  compactable: readonly ConversationMessage[],
  previousSummary: string | undefined,
  deps: Pick<CompactionDeps, 'tokens' | 'inputBudget'>,
  fold: FoldOptions,
): Promise<FoldedChunks> {
  const { tokens, inputBudget } = deps;
  const lineCost = (m: ConversationMessage) => tokens.count(renderMessage(m)) + 1;
  const chunks = chunkByTokens(compactable, inputBudget, lineCost);
  const foldInput = chunks.map((chunk) => foldChunkOf(chunk, inputBudget, (t) => tokens.count(t)));
  const steps = await foldChunks(foldInput, previousSummary, fold);
  return { chunks, steps };
}
