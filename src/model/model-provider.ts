/** One message of a summarizer request. */
export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface CompletionRequest {
  system: string;
  messages: ModelMessage[];
  maxOutputTokens: number;
  signal?: AbortSignal;
}

export interface CompletionUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface Completion {
  text: string;
  usage: CompletionUsage;
  /** The model that answered (for results and logs). */
  model: string;
  /** Set when the primary model failed and a fallback answered instead. */
  fallback?: { from: string; reason: string };
}

/**
 * Anything that turns a summarization request into text.
 * Adapters throw MemfoldError('model_error') with `retryable` set; they never return empty text.
 */
export interface ModelProvider {
  /** Identifies the provider in results, e.g. `openai:gpt-4o-mini` or `extractive`. */
  readonly id: string;
  /** Tokens the summarizer model accepts; requests stay within `summarizerInputShare` of it. Default 128,000. */
  readonly contextWindow: number;
  /**
   * True when `usage` is an estimate rather than the model's own count (the offline summarizer).
   * Default false; token estimators only calibrate on real counts.
   */
  readonly estimatesUsage?: boolean;
  complete(request: CompletionRequest): Promise<Completion>;
}
