/**
 * The token estimate when the model's tokenizer is unknown: ASCII letters and spaces (the words of English-like
 * prose) at WORD_CHARS_PER_TOKEN characters a token, every other character (digits, punctuation, line breaks,
 * other scripts) at OTHER_CHARS_PER_TOKEN. Against exact o200k_base counts it is within about 11% in total on
 * prose, system prompts, tool-call JSON, JSON tool outputs and code, where plain chars/4 ranges from 31% under
 * (JSON tool outputs) to 23% over (system prompts): the measurements are in README.md. One pass over the text.
 */

/** Characters a token of ASCII letters and spaces: o200k_base reads 4.5 to 4.9 characters a token on English prose. */
export const WORD_CHARS_PER_TOKEN = 5;
/** Characters a token of every other character: JSON and code punctuation, digits, non-Latin scripts. */
export const OTHER_CHARS_PER_TOKEN = 2;

export function estimateTokens(text: string): number {
  let wordChars = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || (c >= 97 && c <= 122) || (c >= 65 && c <= 90)) wordChars++;
  }
  return Math.ceil(wordChars / WORD_CHARS_PER_TOKEN + (text.length - wordChars) / OTHER_CHARS_PER_TOKEN);
}
