/**
 * The TokenCounter factory: exact counts when the model's tokenizer is known, otherwise the estimate of
 * `estimate-tokens.ts`. O(n) in the text; nothing is memoized per text, and nothing is learned: a conversation's
 * calibration by the assistant's usage is kept apart (`usage-calibration.ts`).
 */
import type { ConversationMessage } from '../conversation/types.js';
import { InvalidArgumentError } from '../errors.js';
import { countWith, encodingForModel, getEncoder } from './encodings.js';
import { estimateTokens } from './estimate-tokens.js';
import type { TokenCounter } from './token-counter.js';

export interface TokenCounterOptions {
  /** The assistant's model (RuntimeConfig.assistantModel); picks the exact tokenizer when known. */
  model?: string;
  /**
   * `auto` (default): exact when the model is known, else the estimate (`estimateTokens`).
   * `chars4`: plain ceil(chars / 4), no tokenizer (reproducible evaluation).
   */
  mode?: 'auto' | 'chars4';
}

/** Tokens a chat format adds around every message (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

type MessageLike = Pick<ConversationMessage, 'role' | 'content' | 'toolCalls' | 'name' | 'toolCallId'>;

function chars4(text: string): number {
  return Math.ceil(text.length / 4);
}

function toolJson(message: MessageLike): string {
  return message.toolCalls && message.toolCalls.length > 0 ? JSON.stringify(message.toolCalls) : '';
}

/** Characters of text a counter remembers the counts of, at most (about 8 MB); past it, it starts over. */
const REMEMBERED_CHARS = 4_000_000;

/**
 * `count` with the counts of texts already seen remembered: a compaction counts the same messages several times
 * (the plan, again under the lock, again after tier 2), and byte-pair encoding is the slow part of planning.
 */
function remembering(count: (text: string) => number): (text: string) => number {
  const seen = new Map<string, number>();
  let chars = 0;
  return (text) => {
    const known = seen.get(text);
    if (known !== undefined) return known;
    const tokens = count(text);
    if (chars + text.length > REMEMBERED_CHARS) {
      seen.clear();
      chars = 0;
    }
    if (text.length <= REMEMBERED_CHARS) {
      seen.set(text, tokens);
      chars += text.length;
    }
    return tokens;
  };
}

/** A counter of texts made into a TokenCounter: the message overhead, content, name, tool call id and tool-call JSON. */
function counterOf(exact: boolean, count: (text: string) => number): TokenCounter {
  return {
    exact,
    count,
    countMessage(m) {
      const json = toolJson(m);
      return MESSAGE_OVERHEAD_TOKENS + count(m.content) + count(m.name ?? '') + count(m.toolCallId ?? '') + count(json);
    },
  };
}

export function createTokenCounter(options: TokenCounterOptions = {}): TokenCounter {
  const mode = options.mode ?? 'auto';
  if (mode !== 'auto' && mode !== 'chars4') throw new InvalidArgumentError('mode', `must be "auto" or "chars4" (got "${String(mode)}")`);
  if (mode === 'chars4') return counterOf(false, chars4);
  const encoding = options.model ? encodingForModel(options.model) : undefined;
  if (encoding) {
    const encoder = getEncoder(encoding);
    return counterOf(
      true,
      remembering((text) => countWith(encoder, text)),
    );
  }
  // The model unknown, no tokenizer loads at all, tool-call JSON included: loading o200k_base's ranks takes
  // seconds, and the estimate is within a few percent of it on tool-call JSON in total (README.md).
  return counterOf(false, estimateTokens);
}
