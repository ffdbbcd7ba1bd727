/**
 * One chat model behind any OpenAI-compatible endpoint, for the answer and the judge: the `openai` client built with
 * `maxRetries: 0` under memfold's one retry loop (`runQueuedWithRetry`: the queue bounding calls in flight, a circuit
 * breaker, backoff honouring retry-after, a per-attempt timeout and an overall deadline). Each answer's usage, as
 * the server reports it (chars/4 when it reports none), is added to the caller's tally.
 */
import type OpenAI from 'openai';
import { MemfoldError } from '../../errors.js';
import { createCircuitBreaker } from '../../openai/openai-circuit-breaker.js';
import { clientReady, lazyOpenAIClient } from '../../openai/openai-client.js';
import { PLACEHOLDER_API_KEY } from '../../openai/openai-defaults.js';
import type { ModelQueue } from '../../openai/openai-queue.js';
import { runQueuedWithRetry, type RetryOverrides } from '../../openai/openai-queued-retry.js';

export interface EndpointSettings {
  model: string;
  /** Ending in `/v1`; unset: the `openai` client's default. */
  baseURL?: string;
  apiKey?: string;
}

export interface CallLimits {
  timeoutMs: number;
  maxRetries: number;
  deadlineMs: number;
  queue: ModelQueue;
  retry?: RetryOverrides;
  /** Ends every call of the run, queued, in flight or backing off (the evaluation failed). */
  signal?: AbortSignal;
}

/**
 * Calls and tokens of one model: `cachedInputTokens` of the input the provider served from its prompt cache (OpenAI's
 * `prompt_tokens_details.cached_tokens`; many questions of one conversation share the prompt's opening);
 * `estimatedCalls` those whose server sent no usage (counted as chars/4).
 */
export interface UsageTally {
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  estimatedCalls: number;
}

export const emptyTally = (): UsageTally => ({ calls: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, estimatedCalls: 0 });

export function addTally(into: UsageTally, from: UsageTally): void {
  into.calls += from.calls;
  into.inputTokens += from.inputTokens;
  into.cachedInputTokens += from.cachedInputTokens;
  into.outputTokens += from.outputTokens;
  into.estimatedCalls += from.estimatedCalls;
}

export interface ChatRequest {
  messages: OpenAI.Chat.ChatCompletionMessageParam[];
  tools?: OpenAI.Chat.ChatCompletionTool[];
  toolChoice?: 'auto' | 'none';
  maxTokens: number;
  tally: UsageTally;
}

export interface ChatEndpoint {
  id: string;
  model: string;
  /** The first choice's message; throws a `model_error` MemfoldError once retries, deadline or breaker stop it. */
  complete(request: ChatRequest): Promise<OpenAI.Chat.ChatCompletionMessage>;
}

const chars = (messages: readonly OpenAI.Chat.ChatCompletionMessageParam[]) => messages.reduce((n, m) => n + JSON.stringify(m.content ?? '').length, 0);

export function createChatEndpoint(settings: EndpointSettings, limits: CallLimits): ChatEndpoint {
  const id = `openai:${settings.model}`;
  const breaker = createCircuitBreaker();
  const client = lazyOpenAIClient({
    apiKey: settings.apiKey ?? PLACEHOLDER_API_KEY,
    timeout: limits.timeoutMs,
    maxRetries: 0,
    ...(settings.baseURL !== undefined ? { baseURL: settings.baseURL } : {}),
  });

  async function attempt(request: ChatRequest, remainingMs: number): Promise<OpenAI.Chat.ChatCompletionMessage> {
    const timeout = Math.max(1, Math.min(limits.timeoutMs, Math.ceil(remainingMs)));
    const response = await (await client()).chat.completions.create(
      {
        model: settings.model,
        messages: request.messages,
        max_tokens: request.maxTokens,
        stream: false,
        ...(request.tools ? { tools: request.tools, tool_choice: request.toolChoice ?? 'auto' } : {}),
      },
      { maxRetries: 0, timeout, ...(limits.signal ? { signal: limits.signal } : {}) },
    );
    const message = Array.isArray(response.choices) ? response.choices[0]?.message : undefined;
    if (!message)
      throw new MemfoldError('model_error', `${id}: malformed response: no choices`, { retryable: true, details: { reason: 'malformed response' } });
    const usage = response.usage;
    const estimated = typeof usage?.prompt_tokens !== 'number';
    request.tally.calls++;
    request.tally.inputTokens += usage?.prompt_tokens ?? Math.ceil(chars(request.messages) / 4);
    request.tally.outputTokens += usage?.completion_tokens ?? Math.ceil(JSON.stringify(message).length / 4);
    request.tally.cachedInputTokens += usage?.prompt_tokens_details?.cached_tokens ?? 0;
    if (estimated) request.tally.estimatedCalls++;
    return message;
  }

  return {
    id,
    model: settings.model,
    async complete(request) {
      await clientReady(client);
      return runQueuedWithRetry((remainingMs) => attempt(request, remainingMs), {
        queue: limits.queue,
        id,
        errorCode: 'model_error',
        maxRetries: limits.maxRetries,
        breaker,
        retry: { deadlineMs: limits.deadlineMs, ...limits.retry },
        ...(limits.signal ? { signal: limits.signal } : {}),
      });
    },
  };
}
