/**
 * Summaries from any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter)
 * through the `openai` package. One retry loop (`retryWithBackoff`) around a client built with
 * `maxRetries: 0`; every attempt goes through the shared model queue.
 */
import OpenAI from 'openai';
import { DEFAULT_CONTEXT_WINDOW, DEFAULT_MODEL_CONCURRENCY } from '../../config.js';
import { InvalidArgumentError, MemfoldError } from '../../errors.js';
import type { Completion, CompletionRequest, ModelProvider } from '../model-provider.js';
import { createModelQueue, type ModelQueue } from '../model-queue.js';
import { toMemfoldError } from './openai-errors.js';
import { runQueuedWithRetry, type RetryOverrides } from './queued-retry.js';

/** Sent as the API key when none is given: local servers (Ollama, vLLM, LM Studio) need none. */
export const PLACEHOLDER_API_KEY = 'not-needed';

export interface OpenAIModelOptions {
  /** Endpoint ending in `/v1`. Unset: the `openai` client's default (OPENAI_BASE_URL or api.openai.com). */
  baseURL?: string;
  /** Unset: `not-needed` (see PLACEHOLDER_API_KEY). */
  apiKey?: string;
  model: string;
  /** Tokens the summarizer model accepts. Default DEFAULT_CONTEXT_WINDOW (128,000). */
  contextWindow?: number;
  /** Per-attempt timeout in ms (RuntimeConfig.modelTimeoutMs). */
  timeoutMs: number;
  /** Retries after the first attempt (RuntimeConfig.modelMaxRetries). */
  maxRetries: number;
  /** Shared queue; default a new one with DEFAULT_MODEL_CONCURRENCY. */
  queue?: ModelQueue;
  fetch?: typeof fetch;
  /**
   * Request field carrying `maxOutputTokens`. Default `max_tokens`, which every OpenAI-compatible server
   * accepts; OpenAI's reasoning models (o1, o3, ...) require `max_completion_tokens`.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Backoff and injected time; defaults RETRY_BACKOFF and real timers. */
  retry?: RetryOverrides;
}

/** The few members of the `openai` client this adapter uses. */
interface ChatClient {
  chat: { completions: { create: OpenAI['chat']['completions']['create'] } };
}

/** Token estimate when the server reports no usage: ceil(chars / 4). */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function createOpenAIModel(options: OpenAIModelOptions): ModelProvider {
  if (!options.model || options.model.trim() === '') throw new InvalidArgumentError('model', 'must be a non-empty model name');
  if (!(options.timeoutMs > 0)) throw new InvalidArgumentError('timeoutMs', `must be > 0 (got ${options.timeoutMs})`);
  if (!Number.isInteger(options.maxRetries) || options.maxRetries < 0) {
    throw new InvalidArgumentError('maxRetries', `must be an integer >= 0 (got ${options.maxRetries})`);
  }
  const id = `openai:${options.model}`;
  const contextWindow = options.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const queue = options.queue ?? createModelQueue({ concurrency: DEFAULT_MODEL_CONCURRENCY });
  const maxTokensField = options.maxTokensField ?? 'max_tokens';
  const client: ChatClient = new OpenAI({
    apiKey: options.apiKey ?? PLACEHOLDER_API_KEY,
    timeout: options.timeoutMs,
    maxRetries: 0, // the one retry loop is retryWithBackoff
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  async function attempt(request: CompletionRequest): Promise<Completion> {
    const { signal } = request;
    let response: Awaited<ReturnType<ChatClient['chat']['completions']['create']>>;
    try {
      response = await client.chat.completions.create(
        {
          model: options.model,
          messages: [{ role: 'system', content: request.system }, ...request.messages.map((m) => ({ role: m.role, content: m.content }))],
          [maxTokensField]: request.maxOutputTokens,
          stream: false,
        },
        { maxRetries: 0, timeout: options.timeoutMs, ...(signal ? { signal } : {}) },
      );
    } catch (error) {
      throw toMemfoldError(error, 'model_error', id, signal);
    }
    const choices = (response as { choices?: unknown }).choices;
    if (!Array.isArray(choices)) {
      throw new MemfoldError('model_error', `${id}: malformed response: no choices`, { retryable: true, details: { reason: 'malformed response' } });
    }
    const text = (response.choices[0]?.message?.content ?? '').trim();
    if (text === '') {
      // Not retried: a model that answers nothing (often a reasoning model that spent its budget thinking)
      // tends to do it again; the fallback summarizer is the better next step.
      throw new MemfoldError('model_error', `${id}: empty output`, { retryable: false, details: { reason: 'empty output' } });
    }
    const inputChars = request.system.length + request.messages.reduce((sum, m) => sum + m.content.length, 0);
    return {
      text,
      usage: {
        inputTokens: response.usage?.prompt_tokens ?? Math.ceil(inputChars / 4),
        outputTokens: response.usage?.completion_tokens ?? estimateTokens(text),
      },
      model: response.model || options.model,
    };
  }

  return {
    id,
    contextWindow,
    complete(request) {
      if (!Number.isInteger(request.maxOutputTokens) || request.maxOutputTokens < 1) {
        return Promise.reject(new InvalidArgumentError('maxOutputTokens', `must be an integer >= 1 (got ${request.maxOutputTokens})`));
      }
      return runQueuedWithRetry(() => attempt(request), {
        queue, id, errorCode: 'model_error', maxRetries: options.maxRetries,
        ...(options.retry ? { retry: options.retry } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      });
    },
  };
}
