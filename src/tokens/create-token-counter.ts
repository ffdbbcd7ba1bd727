/**
 * The TokenCounter factory: exact counts when the model's tokenizer is known, otherwise chars/4
 * calibrated by the last observed usage. O(n) in the text; nothing is memoized per text.
 */
import type { ConversationMessage } from '../conversation/types.js';
import { InvalidArgumentError } from '../errors.js';
import { countWith, encodingForModel, getEncoder, type EncodingName } from './encodings.js';
import type { TokenCounter } from './token-counter.js';

export interface TokenCounterOptions {
  /** The assistant's model (RuntimeConfig.assistantModel); picks the exact tokenizer when known. */
  model?: string;
  /**
   * `auto` (default): exact when the model is known, else the calibrated estimator.
   * `chars4`: plain ceil(chars / 4), no tokenizer and no calibration (reproducible evaluation).
   */
  mode?: 'auto' | 'chars4';
}

/** Tokens a chat format adds around every message (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Estimator factor before any usage is observed: chars/4 undercounts most non-English text and code. */
export const INITIAL_CALIBRATION = 1.5;
/** Bounds of the learned factor, so one odd usage figure cannot make estimates absurd. */
export const CALIBRATION_RANGE = Object.freeze({ min: 1.0, max: 5.0 });
/**
 * Tool-call JSON is counted with this tokenizer when the model's own is unknown: chars/4 undercounts
 * JSON by about 27%, and any modern BPE is closer than that.
 */
const TOOL_JSON_FALLBACK_ENCODING: EncodingName = 'o200k_base';

type MessageLike = Pick<ConversationMessage, 'role' | 'content' | 'toolCalls' | 'name' | 'toolCallId'>;

function chars4(text: string): number {
  return Math.ceil(text.length / 4);
}

function toolJson(message: MessageLike): string {
  return message.toolCalls && message.toolCalls.length > 0 ? JSON.stringify(message.toolCalls) : '';
}

export function createTokenCounter(options: TokenCounterOptions = {}): TokenCounter {
  const mode = options.mode ?? 'auto';
  if (mode !== 'auto' && mode !== 'chars4') throw new InvalidArgumentError('mode', `must be "auto" or "chars4" (got "${String(mode)}")`);
  const encoding = mode === 'auto' && options.model ? encodingForModel(options.model) : undefined;

  if (mode === 'chars4') {
    const count = (text: string): number => chars4(text);
    return {
      exact: false,
      count,
      countMessage: (m) => MESSAGE_OVERHEAD_TOKENS + count(m.content) + count(m.name ?? '') + count(m.toolCallId ?? '') + count(toolJson(m)),
      observe: () => {},
    };
  }

  if (encoding) {
    const encoder = getEncoder(encoding);
    const count = (text: string): number => countWith(encoder, text);
    return {
      exact: true,
      count,
      countMessage: (m) => MESSAGE_OVERHEAD_TOKENS + count(m.content) + count(m.name ?? '') + count(m.toolCallId ?? '') + count(toolJson(m)),
      observe: () => {},
    };
  }

  let factor = INITIAL_CALIBRATION;
  const count = (text: string): number => (text === '' ? 0 : Math.ceil((text.length / 4) * factor));
  return {
    exact: false,
    count,
    countMessage(m) {
      const json = toolJson(m);
      const jsonTokens = json === '' ? 0 : countWith(getEncoder(TOOL_JSON_FALLBACK_ENCODING), json);
      return MESSAGE_OVERHEAD_TOKENS + count(m.content) + count(m.name ?? '') + count(m.toolCallId ?? '') + jsonTokens;
    },
    observe(text, actualTokens) {
      if (text.length === 0 || !Number.isFinite(actualTokens) || actualTokens <= 0) return;
      const raw = actualTokens / (text.length / 4);
      factor = Math.min(CALIBRATION_RANGE.max, Math.max(CALIBRATION_RANGE.min, raw));
    },
  };
}
