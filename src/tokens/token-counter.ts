import type { ConversationMessage } from '../conversation/types.js';

/**
 * Counts tokens. `exact` is true when the model's tokenizer is known; otherwise counts are estimates
 * (`estimateTokens`). A conversation's count is calibrated by the assistant's reported usage apart from the
 * counter (`Compactor.observeUsage`, `usage-calibration.ts`), so a counter holds no state.
 */
export interface TokenCounter {
  readonly exact: boolean;
  /** Tokens of a plain text. */
  count(text: string): number;
  /** Tokens of a message as the model sees it: content, tool calls and a small per-message overhead. */
  countMessage(message: Pick<ConversationMessage, 'role' | 'content' | 'toolCalls' | 'name' | 'toolCallId'>): number;
}
