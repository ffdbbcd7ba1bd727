/**
 * What makes a model's answer unfit to become a summary, even when the call itself succeeded: nothing
 * written, cut off at the output limit, far over the limit, or text that is not valid Unicode. Pure; the
 * remote adapters turn a fault into a `model_error` with this reason and retryability, and the fallback
 * summarizer answers instead, so such text never reaches the archive.
 */

/** The short reasons, as reported in `details.reason` and in a Completion's `fallback.reason`. */
export const OUTPUT_FAULT = Object.freeze({
  empty: 'empty output',
  truncated: 'truncated output',
  overLong: 'over-long output',
  invalidUtf8: 'invalid utf-8',
});

/** An answer over this many times `maxOutputTokens` is refused: the server ignored the limit. */
export const OVER_LONG_FACTOR = 2;

export interface ModelOutput {
  /** The answer's text, trimmed. */
  text: string;
  /** The model stopped at the output limit (OpenAI: `finish_reason: 'length'`). */
  cutOff: boolean;
  /** Output tokens of the text as the server counted them (reasoning tokens excluded), when it did. */
  outputTokens?: number;
}

export interface OutputFault {
  reason: string;
  /** Whether asking again may give a usable answer. */
  retryable: boolean;
  /** Says what was seen, for the error message. */
  detail: string;
}

/** Token estimate of a text: ceil(chars / 4); used when it is larger than the server's count. */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

// A lone surrogate (`\ud800` escaped in JSON) is the only way a JS string is not valid Unicode: with the
// `u` flag, paired surrogates form one code point and do not match \p{Cs}.
const LONE_SURROGATE = /\p{Cs}/u;
// What a decoder puts where bytes are not valid UTF-8.
const REPLACEMENT_CHARACTER = '\uFFFD';

/**
 * The first fault of `output`, else undefined. `requestText` is what was sent: a replacement character
 * the request itself holds may be echoed legitimately.
 */
export function findOutputFault(output: ModelOutput, request: { maxOutputTokens: number; requestText: string }): OutputFault | undefined {
  const { text } = output;
  if (text === '') {
    // Not retried: a model that answers nothing (often a reasoning model that spent its budget thinking)
    // tends to do it again; the fallback summarizer is the better next step.
    return { reason: OUTPUT_FAULT.empty, retryable: false, detail: 'the model returned no text' };
  }
  if (output.cutOff) {
    // Not retried: the same request with the same limit makes the model write as much again, and each try
    // costs a full-length answer. A summary missing its end must not be archived as if it were whole.
    return { reason: OUTPUT_FAULT.truncated, retryable: false, detail: `cut off at the ${request.maxOutputTokens}-token limit` };
  }
  const replaced = text.includes(REPLACEMENT_CHARACTER) && !request.requestText.includes(REPLACEMENT_CHARACTER);
  if (replaced || LONE_SURROGATE.test(text)) {
    // Retried: broken bytes come from a sampled run of byte tokens that forms no character, or from a proxy
    // mangling the body; another answer usually comes out clean.
    const what = replaced ? 'bytes that are not UTF-8 (U+FFFD)' : 'a lone surrogate';
    return { reason: OUTPUT_FAULT.invalidUtf8, retryable: true, detail: `the text holds ${what}` };
  }
  const tokens = Math.max(output.outputTokens ?? 0, estimateTokens(text));
  const limit = OVER_LONG_FACTOR * request.maxOutputTokens;
  if (tokens > limit) {
    // Not retried: a server that ignores the output limit ignores it again. Clipping would keep the start of
    // the summary and drop its end (the newest facts), so the fallback answers within budget instead.
    return { reason: OUTPUT_FAULT.overLong, retryable: false, detail: `${tokens} tokens, over ${limit} (${OVER_LONG_FACTOR} x ${request.maxOutputTokens})` };
  }
  return undefined;
}
