/**
 * The summarizer's budgets, pure: what one request's transcript may take, and what a chunk may stretch to. Computed
 * once per settings object by the compactor; refused (`invalid_config`) when the summarizer's window leaves no room.
 */
import { MemfoldError } from '../../errors.js';
import type { Summarizer } from '../../summarizer/summarizer.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import type { CompactionSettings } from '../compaction-settings.js';
import { REMAINDER_STRETCH } from './chunk.js';
import { promptOverhead } from './fold.js';

/**
 * Tokens the transcript part of one summarizer request may take: a chunk, within the summarizer's window
 * share less its fixed instructions and room for the summary so far and the answer. Refused when nothing fits.
 */
export function summarizerInputBudget(summarizer: Summarizer, tokens: TokenCounter, settings: CompactionSettings): number {
  return Math.min(settings.chunkTokens, requestRoom(summarizer, tokens, settings));
}

/**
 * The most a chunk may hold when it takes in a small remainder: REMAINDER_STRETCH chunks, within one request's room.
 * Only for a summarizer that re-sends instructions with every request (`promptOverhead`, a model): the stretched
 * chunk gets one summary where two would keep more, which is worth a request only when a request costs one. The
 * offline summarizer keeps the remainder's chunk (README, "When memfold compacts": .913 / .897 readable evidence /
 * answer words at 16k, .907 / .889 stretched).
 */
export function chunkStretchBudget(summarizer: Summarizer, tokens: TokenCounter, settings: CompactionSettings): number {
  const room = requestRoom(summarizer, tokens, settings);
  const budget = Math.min(settings.chunkTokens, room);
  if (promptOverhead(summarizer, settings.maxSummaryTokens) === '') return budget;
  return Math.max(budget, Math.min(Math.floor(settings.chunkTokens * REMAINDER_STRETCH), room));
}

/** The summarizer's window share less its fixed instructions and room for the summary so far and the answer. */
function requestRoom(summarizer: Summarizer, tokens: TokenCounter, settings: CompactionSettings): number {
  const systemTokens = tokens.count(promptOverhead(summarizer, settings.maxSummaryTokens));
  const windowShare = Math.floor(summarizer.contextWindow * settings.summarizerInputShare);
  const room = windowShare - systemTokens - 2 * settings.maxSummaryTokens - 64;
  if (!(Math.min(settings.chunkTokens, room) >= 64)) {
    throw new MemfoldError(
      'invalid_config',
      `Invalid config field compaction.summarizerInputShare: the summarizer window (${summarizer.contextWindow} tokens, MEMFOLD_SUMMARY_CONTEXT_WINDOW) leaves no room for a chunk beside the instructions and twice maxSummaryTokens (${settings.maxSummaryTokens}): use a model with a larger window, or lower compaction.maxSummaryTokens`,
    );
  }
  return room;
}
