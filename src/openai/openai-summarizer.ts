/**
 * Summaries from any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter)
 * through the `openai` package. It renders its own prompt from the structured request (openai-prompt.ts).
 * One retry loop (`retryWithBackoff`) around a client built with `maxRetries: 0`; every attempt goes
 * through the shared model queue.
 */
import type OpenAI from 'openai';
import { InvalidArgumentError, MemfoldError } from '../errors.js';
import { checkDurationMs } from '../duration-ms.js';
import type { Summarizer, SummarizeRequest, Summary } from '../summarizer/summarizer.js';
import { createCircuitBreaker, type CircuitBreaker } from './openai-circuit-breaker.js';
import { DEFAULT_MODEL_CONCURRENCY, DEFAULT_SUMMARIZER_CONTEXT_WINDOW, PLACEHOLDER_API_KEY, defaultModelDeadlineMs } from './openai-defaults.js';
import { clientReady, lazyOpenAIClient } from './openai-client.js';
import { toMemfoldError } from './openai-errors.js';
import { interpolatePrompt, renderUserMessage } from './openai-prompt.js';
import {
  DEFAULT_SUMMARY_PROMPT_MODE,
  isSummaryPromptMode,
  longestPromptTemplate,
  promptTemplateFor,
  SUMMARY_PROMPT_MODE_RULE,
  type SummaryPromptMode,
} from './openai-prompt-mode.js';
import { findOutputFault } from './openai-output-faults.js';
import { createModelQueue, type ModelQueue } from './openai-queue.js';
import { runQueuedWithRetry, type RetryOverrides } from './openai-queued-retry.js';

export interface OpenAISummarizerOptions {
  /** Endpoint ending in `/v1`. Unset: the `openai` client's default (OPENAI_BASE_URL or api.openai.com). */
  baseURL?: string;
  /** Unset: `not-needed` (see PLACEHOLDER_API_KEY). */
  apiKey?: string;
  model: string;
  /** Tokens the summarizer model accepts. Default DEFAULT_SUMMARIZER_CONTEXT_WINDOW (128,000). */
  contextWindow?: number;
  /**
   * The system prompt template; `{{maxTokens}}` is filled with the request's `maxOutputTokens`. Default: the
   * built-in prompt of `promptMode`. When set, it is sent with every request whatever the mode. The material
   * follows in the user message, in `<previous_summary>` and `<transcript>`.
   */
  prompt?: string;
  /**
   * Which built-in prompt summarizes a chunk. `structured` (default): seven sections per chunk, building on the
   * summary so far without repeating it (DEFAULT_SUMMARIZATION_PROMPT). `update`: a chunk that follows a summary is
   * merged into it, and the answer is one rewritten summary that replaces it (UPDATE_SUMMARIZATION_PROMPT); the
   * first chunk and re-summarization use the structured prompt. A custom `prompt` wins over both.
   */
  promptMode?: SummaryPromptMode;
  /** Per-attempt timeout in ms (RuntimeConfig.modelTimeoutMs). */
  timeoutMs: number;
  /** Retries after the first attempt (RuntimeConfig.modelMaxRetries). */
  maxRetries: number;
  /**
   * Total ms for one `complete` call, queue waits, attempts and backoff included (RuntimeConfig.modelDeadlineMs):
   * no attempt outlives it and no retry starts past it. Default twice `timeoutMs`.
   */
  deadlineMs?: number;
  /** Shared queue; default a new one with DEFAULT_MODEL_CONCURRENCY. */
  queue?: ModelQueue;
  fetch?: typeof fetch;
  /**
   * Request field carrying `maxOutputTokens`. Default `max_tokens`, which every OpenAI-compatible server
   * accepts; OpenAI's reasoning models (o1, o3, ...) require `max_completion_tokens`.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Backoff and injected time; defaults RETRY_BACKOFF and real timers. A `deadlineMs` here wins over the option. */
  retry?: RetryOverrides;
  /**
   * Stops sending after repeated timeouts or refused connections, for a cooldown (see circuit-breaker.ts).
   * Default: one of its own with the default settings; the composition root passes one built from the runtime config.
   */
  breaker?: CircuitBreaker;
}

/** The few members of the `openai` client this adapter uses. */
interface ChatClient {
  chat: { completions: { create: OpenAI['chat']['completions']['create'] } };
}

/** Token estimate when the server reports no usage: ceil(chars / 4). */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Tokens of the visible text as the server counted them: reasoning tokens are billed as output but not shown. */
function visibleOutputTokens(usage: OpenAI.CompletionUsage | undefined): { outputTokens?: number } {
  if (typeof usage?.completion_tokens !== 'number') return {};
  return { outputTokens: usage.completion_tokens - (usage.completion_tokens_details?.reasoning_tokens ?? 0) };
}

export function createOpenAISummarizer(options: OpenAISummarizerOptions): Summarizer {
  if (!options.model || options.model.trim() === '') throw new InvalidArgumentError('model', 'must be a non-empty model name');
  checkDurationMs(options.timeoutMs, 'timeoutMs', { min: 1 });
  if (!Number.isInteger(options.maxRetries) || options.maxRetries < 0) {
    throw new InvalidArgumentError('maxRetries', `must be an integer >= 0 (got ${options.maxRetries})`);
  }
  if (options.deadlineMs !== undefined) checkDurationMs(options.deadlineMs, 'deadlineMs', { min: 1 });
  if (options.prompt !== undefined && (typeof options.prompt !== 'string' || options.prompt.trim() === '')) {
    throw new InvalidArgumentError('prompt', 'must be a non-empty string');
  }
  if (options.promptMode !== undefined && !isSummaryPromptMode(options.promptMode)) {
    throw new InvalidArgumentError('promptMode', `${SUMMARY_PROMPT_MODE_RULE} (got ${JSON.stringify(options.promptMode)})`);
  }
  const id = `openai:${options.model}`;
  const mode = options.promptMode ?? DEFAULT_SUMMARY_PROMPT_MODE;
  const fill = (template: string, maxOutputTokens: number) => interpolatePrompt(template, { maxTokens: maxOutputTokens });
  const systemPrompt = (request: SummarizeRequest) => fill(options.prompt ?? promptTemplateFor(mode, request), request.maxOutputTokens);
  // The core counts this against the window for every request: the longest system prompt this mode may send.
  const promptOverhead = (maxOutputTokens: number) => fill(options.prompt ?? longestPromptTemplate(mode), maxOutputTokens);
  const deadlineMs = options.deadlineMs ?? defaultModelDeadlineMs(options.timeoutMs);
  const contextWindow = options.contextWindow ?? DEFAULT_SUMMARIZER_CONTEXT_WINDOW;
  const queue = options.queue ?? createModelQueue({ concurrency: DEFAULT_MODEL_CONCURRENCY });
  const maxTokensField = options.maxTokensField ?? 'max_tokens';
  const breaker = options.breaker ?? createCircuitBreaker();
  const client: () => Promise<ChatClient> = lazyOpenAIClient({
    apiKey: options.apiKey ?? PLACEHOLDER_API_KEY,
    timeout: options.timeoutMs,
    maxRetries: 0, // the one retry loop is retryWithBackoff
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  /** One request; its timeout is cut to the time left before the deadline. */
  async function attempt(request: SummarizeRequest, system: string, user: string, remainingMs: number): Promise<Summary> {
    const { signal } = request;
    const timeout = Math.max(1, Math.min(options.timeoutMs, Math.ceil(remainingMs)));
    let response: Awaited<ReturnType<ChatClient['chat']['completions']['create']>>;
    try {
      response = await (await client()).chat.completions.create(
        {
          model: options.model,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
          [maxTokensField]: request.maxOutputTokens,
          stream: false,
        },
        { maxRetries: 0, timeout, ...(signal ? { signal } : {}) },
      );
    } catch (error) {
      throw toMemfoldError(error, 'model_error', id, signal);
    }
    const choices = (response as { choices?: unknown }).choices;
    if (!Array.isArray(choices)) {
      throw new MemfoldError('model_error', `${id}: malformed response: no choices`, { retryable: true, details: { reason: 'malformed response' } });
    }
    const choice = response.choices[0];
    const text = (choice?.message?.content ?? '').trim();
    const requestText = `${system}\n${user}`;
    const fault = findOutputFault(
      { text, cutOff: choice?.finish_reason === 'length', ...visibleOutputTokens(response.usage) },
      { maxOutputTokens: request.maxOutputTokens, requestText },
    );
    if (fault) {
      throw new MemfoldError('model_error', `${id}: ${fault.reason}: ${fault.detail}`, { retryable: fault.retryable, details: { reason: fault.reason } });
    }
    const inputChars = system.length + user.length;
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
    promptOverhead,
    summarize(request) {
      if (!Number.isInteger(request.maxOutputTokens) || request.maxOutputTokens < 1) {
        return Promise.reject(new InvalidArgumentError('maxOutputTokens', `must be an integer >= 1 (got ${request.maxOutputTokens})`));
      }
      // Rendered once: every retry sends the same request.
      const system = systemPrompt(request);
      const user = renderUserMessage(request);
      return clientReady(client).then(() =>
        runQueuedWithRetry((remainingMs) => attempt(request, system, user, remainingMs), {
          queue,
          id,
          errorCode: 'model_error',
          maxRetries: options.maxRetries,
          breaker,
          retry: { deadlineMs, ...options.retry },
          ...(request.signal ? { signal: request.signal } : {}),
        }),
      );
    },
  };
}
