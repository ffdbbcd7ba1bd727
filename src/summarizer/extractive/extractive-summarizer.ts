/**
 * The offline summarizer: deterministic, no network, a few milliseconds per chunk. It works from the port's
 * structured request (the transcript lines, or the summaries to merge, and the summary so far to avoid
 * repeating), keeps the sentences that carry the most names, numbers, dates and rare words, with filler dropped
 * and relative dates resolved, and writes them in the default prompt's sections, one line per speaker's run
 * (`extractive-summary.ts`; this file is the port's adapter around it).
 */
import { InvalidArgumentError, MemfoldError } from '../../errors.js';
import type { Summarizer, Summary } from '../summarizer.js';

export const EXTRACTIVE_MODEL_ID = 'extractive';

/** Token estimate used for the budget and usage: ceil(chars / 4). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function createExtractiveSummarizer(): Summarizer {
  return {
    id: EXTRACTIVE_MODEL_ID,
    contextWindow: Number.POSITIVE_INFINITY,
    // Usage is chars/4, not a tokenizer's count: token estimators must not calibrate on it.
    estimatesUsage: true,
    async summarize(request): Promise<Summary> {
      if (request.signal?.aborted) {
        throw new MemfoldError('model_error', 'extractive: aborted', { cause: request.signal.reason, details: { reason: 'aborted' } });
      }
      if (!Number.isInteger(request.maxOutputTokens) || request.maxOutputTokens < 1) {
        throw new InvalidArgumentError('maxOutputTokens', `must be an integer >= 1 (got ${request.maxOutputTokens})`);
      }
      // The selection and its modules (`extractive-summary.ts`) load with the first summary.
      const { inputChars, summarizeExtractive } = await import('./extractive-summary.js');
      const text = summarizeExtractive(request);
      return {
        text,
        usage: { inputTokens: Math.ceil(inputChars(request) / 4), outputTokens: estimateTokens(text) },
        model: EXTRACTIVE_MODEL_ID,
      };
    },
  };
}
