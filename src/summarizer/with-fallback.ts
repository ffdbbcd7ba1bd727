/**
 * A summarizer that cannot fail as long as its fallback does not: the primary answers, and when it throws
 * (after its own retries) the fallback answers instead, with `fallback: { from, reason }` on the result.
 * The usual pair is an OpenAI-compatible model over the offline extractive summarizer.
 */
import type { Summarizer, Summary } from './summarizer.js';
import { failureReason } from '../errors.js';

export function withFallback(primary: Summarizer, fallback: Summarizer): Summarizer {
  return {
    id: primary.id,
    // Requests are sized for the primary; the fallback must accept at least as much (the extractive one does).
    contextWindow: primary.contextWindow,
    // The request is sized with the primary's instructions; the fallback reads the same structured request.
    ...(primary.promptOverhead ? { promptOverhead: (maxOutputTokens: number) => primary.promptOverhead!(maxOutputTokens) } : {}),
    async summarize(request): Promise<Summary> {
      try {
        return await primary.summarize(request);
      } catch (error) {
        // An aborted request reaches the fallback with the same signal, which rejects it in turn.
        const answer = await fallback.summarize(request);
        return { ...answer, fallback: { from: primary.id, reason: failureReason(error) } };
      }
    },
  };
}
