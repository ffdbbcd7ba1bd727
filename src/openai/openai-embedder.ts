/**
 * Embeddings from any OpenAI-compatible endpoint through the `openai` package, with the same single
 * retry loop, deadline rule and shared queue as the chat adapter. Float vectors, in input order.
 */
import type OpenAI from 'openai';
import type { Embedder } from '../embedding/embedder.js';
import { InvalidArgumentError, MemfoldError } from '../errors.js';
import { checkDurationMs } from '../duration-ms.js';
import { createCircuitBreaker, type CircuitBreaker } from './openai-circuit-breaker.js';
import { DEFAULT_MODEL_CONCURRENCY, OPENAI_MAX_EMBEDDINGS_PER_CALL, PLACEHOLDER_API_KEY, defaultModelDeadlineMs } from './openai-defaults.js';
import { clientReady, lazyOpenAIClient } from './openai-client.js';
import { toMemfoldError } from './openai-errors.js';
import { createModelQueue, type ModelQueue } from './openai-queue.js';
import { runQueuedWithRetry, type RetryOverrides } from './openai-queued-retry.js';

export interface OpenAIEmbedderOptions {
  baseURL?: string;
  /** Unset: `not-needed` (local servers need none). */
  apiKey?: string;
  model: string;
  /**
   * Vector length. When set it is also sent as `dimensions` (models that can shorten vectors honour it).
   * Unset: learned from the first response (`dimensions` reads 0 until then), then fixed.
   */
  dimensions?: number;
  /** Per-attempt timeout in ms (RuntimeConfig.modelTimeoutMs). */
  timeoutMs: number;
  /** Retries after the first attempt (RuntimeConfig.modelMaxRetries). */
  maxRetries: number;
  /**
   * Total ms for one `embed` call, queue waits, attempts and backoff included (RuntimeConfig.modelDeadlineMs),
   * the same rule as the chat adapter's. Default twice `timeoutMs` (defaultModelDeadlineMs).
   */
  deadlineMs?: number;
  /** Shared queue (the chat adapter's, so concurrency bounds both); default a new one with DEFAULT_MODEL_CONCURRENCY. */
  queue?: ModelQueue;
  fetch?: typeof fetch;
  retry?: RetryOverrides;
  /**
   * Stops sending after repeated timeouts or refused connections, for a cooldown (see circuit-breaker.ts).
   * Default: one of its own with the default settings; the composition root passes one built from the runtime config.
   */
  breaker?: CircuitBreaker;
}

interface EmbeddingsClient {
  embeddings: { create: OpenAI['embeddings']['create'] };
}

export function createOpenAIEmbedder(options: OpenAIEmbedderOptions): Embedder {
  if (!options.model || options.model.trim() === '') throw new InvalidArgumentError('model', 'must be a non-empty model name');
  if (options.dimensions !== undefined && (!Number.isInteger(options.dimensions) || options.dimensions < 1)) {
    throw new InvalidArgumentError('dimensions', `must be an integer >= 1 (got ${options.dimensions})`);
  }
  checkDurationMs(options.timeoutMs, 'timeoutMs', { min: 1 });
  if (!Number.isInteger(options.maxRetries) || options.maxRetries < 0) {
    throw new InvalidArgumentError('maxRetries', `must be an integer >= 0 (got ${options.maxRetries})`);
  }
  if (options.deadlineMs !== undefined) checkDurationMs(options.deadlineMs, 'deadlineMs', { min: 1 });
  const id = `openai:${options.model}`;
  const deadlineMs = options.deadlineMs ?? defaultModelDeadlineMs(options.timeoutMs);
  const queue = options.queue ?? createModelQueue({ concurrency: DEFAULT_MODEL_CONCURRENCY });
  const client: () => Promise<EmbeddingsClient> = lazyOpenAIClient({
    apiKey: options.apiKey ?? PLACEHOLDER_API_KEY,
    timeout: options.timeoutMs,
    maxRetries: 0,
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const breaker = options.breaker ?? createCircuitBreaker();
  let dimensions = options.dimensions ?? 0;

  const fail = (message: string, retryable: boolean, reason: string): MemfoldError =>
    new MemfoldError('embedding_error', `${id}: ${message}`, { retryable, details: { reason } });

  /** One request; its timeout is cut to the time left before the deadline. */
  async function attempt(texts: string[], remainingMs: number, signal?: AbortSignal): Promise<Float32Array[]> {
    const timeout = Math.max(1, Math.min(options.timeoutMs, Math.ceil(remainingMs)));
    let response: Awaited<ReturnType<EmbeddingsClient['embeddings']['create']>>;
    try {
      response = await (await client()).embeddings.create(
        {
          model: options.model,
          input: texts,
          encoding_format: 'float',
          ...(options.dimensions !== undefined ? { dimensions: options.dimensions } : {}),
        },
        { maxRetries: 0, timeout, ...(signal ? { signal } : {}) },
      );
    } catch (error) {
      throw toMemfoldError(error, 'embedding_error', id, signal);
    }
    const data = (response as { data?: unknown }).data;
    if (!Array.isArray(data) || data.length !== texts.length) {
      throw fail(`expected ${texts.length} embeddings, got ${Array.isArray(data) ? data.length : 'none'}`, true, 'malformed response');
    }
    const sorted = [...response.data].sort((a, b) => a.index - b.index);
    return sorted.map((item, i) => {
      if (item.index !== i || !Array.isArray(item.embedding)) throw fail(`embedding ${i} is missing or not a float array`, true, 'malformed response');
      if (dimensions === 0) dimensions = item.embedding.length;
      if (item.embedding.length !== dimensions) {
        throw fail(`vector ${i} has ${item.embedding.length} dimensions, expected ${dimensions}`, false, 'dimension mismatch');
      }
      return Float32Array.from(item.embedding);
    });
  }

  return {
    id,
    get dimensions() {
      return dimensions;
    },
    maxEmbeddingsPerCall: OPENAI_MAX_EMBEDDINGS_PER_CALL,
    async embed(texts, embedOptions = {}) {
      if (texts.length > OPENAI_MAX_EMBEDDINGS_PER_CALL) {
        throw new InvalidArgumentError('texts', `at most ${OPENAI_MAX_EMBEDDINGS_PER_CALL} per call (got ${texts.length}); use embedAll`);
      }
      if (texts.length === 0) return [];
      const { signal } = embedOptions;
      await clientReady(client);
      return runQueuedWithRetry((remainingMs) => attempt(texts, remainingMs, signal), {
        queue,
        id,
        errorCode: 'embedding_error',
        maxRetries: options.maxRetries,
        breaker,
        retry: { deadlineMs, ...options.retry },
        ...(signal ? { signal } : {}),
      });
    },
  };
}
