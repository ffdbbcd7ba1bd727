import type { ConversationMessage } from '../conversation/types.js';

/**
 * Counts tokens. `exact` is true when the model's tokenizer is known; otherwise counts are
 * estimates (chars/4, calibrated by `observe`).
 */
export interface TokenCounter {
  readonly exact: boolean;
  /** Tokens of a plain text. */
  count(text: string): number;
  /** Tokens of a message as the model sees it: content, tool calls and a small per-message overhead. */
  countMessage(message: Pick<ConversationMessage, 'role' | 'content' | 'toolCalls' | 'name' | 'toolCallId'>): number;
  /** Feed a real usage figure back (text that the model counted as `actualTokens`); estimators calibrate on it. */
  observe(text: string, actualTokens: number): void;
}
