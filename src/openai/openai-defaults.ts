/**
 * Defaults of the OpenAI-compatible client: every remote summary and embedding call. `config.ts` reads the
 * environment over these; the adapters fall back to them when built directly.
 */

import { MAX_TIMER_MS } from '../duration-ms.js';

/** Tokens the summarizer model accepts when the caller does not say: 128,000, the common size of current chat models. */
export const DEFAULT_SUMMARIZER_CONTEXT_WINDOW = 128_000;
/** Per-attempt timeout: a minute covers a long summary from a slow local model. */
export const DEFAULT_MODEL_TIMEOUT_MS = 60_000;
/** Retries after the first attempt: two ride out a blip without tripling a real outage's cost. */
export const DEFAULT_MODEL_MAX_RETRIES = 2;
/** Remote calls in flight at once (chat and embeddings together): enough to overlap, few enough for a local server. */
export const DEFAULT_MODEL_CONCURRENCY = 4;
/** Three outages in a row: one slow answer or a blip does not open it, a dead endpoint does within one or two summaries. */
export const DEFAULT_MODEL_BREAKER_FAILURES = 3;
/** A minute: long enough to skip the rest of a compaction's summaries, short enough to notice a recovered endpoint. */
export const DEFAULT_MODEL_BREAKER_COOLDOWN_MS = 60_000;
/** Texts per embeddings request; OpenAI accepts more, but many compatible servers cap batches near 100. */
export const OPENAI_MAX_EMBEDDINGS_PER_CALL = 96;
/** Where the `openai` client sends requests when no base URL is configured (its own default). */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Sent as the API key when none is given: local servers (Ollama, vLLM, LM Studio) need none. */
export const PLACEHOLDER_API_KEY = 'not-needed';

/**
 * Twice the per-request timeout: room for one slow attempt and a retry, not for every retry at full length. At most
 * the longest timer Node keeps (MAX_TIMER_MS), which a longer one would replace with 1 ms.
 */
export function defaultModelDeadlineMs(modelTimeoutMs: number): number {
  return Math.min(2 * modelTimeoutMs, MAX_TIMER_MS);
}
