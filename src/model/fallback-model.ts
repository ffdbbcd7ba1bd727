/**
 * A summarizer that cannot fail as long as its fallback does not: the primary answers, and when it throws
 * (after its own retries) the fallback answers instead, with `fallback: { from, reason }` on the result.
 * The usual pair is an OpenAI-compatible model over the offline extractive summarizer.
 */
import type { Completion, ModelProvider } from './model-provider.js';
import { failureReason } from '../errors.js';

export function withFallback(primary: ModelProvider, fallback: ModelProvider): ModelProvider {
  return {
    id: primary.id,
    // Requests are sized for the primary; the fallback must accept at least as much (the extractive one does).
    contextWindow: primary.contextWindow,
    async complete(request): Promise<Completion> {
      try {
        return await primary.complete(request);
      } catch (error) {
        // An aborted request reaches the fallback with the same signal, which rejects it in turn.
        const answer = await fallback.complete(request);
        return { ...answer, fallback: { from: primary.id, reason: failureReason(error) } };
      }
    },
  };
}
