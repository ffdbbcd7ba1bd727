/**
 * Answer-token retention: the share of an answer's words that a text still holds. Pure.
 * Normalization follows SQuAD (lower case, punctuation and articles dropped) and also drops a few
 * function words, which any text holds and which would inflate the share.
 */

const FUNCTION_WORDS = new Set(['a', 'an', 'the', 'and', 'or', 'of', 'to', 'in', 'on', 'at', 'for', 'with', 'by', 'from', 'is', 'was', 'be', 'it', 'as']);

export function normalizedTokens(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((token) => token !== '' && !FUNCTION_WORDS.has(token));
}

/** Share of the answer's distinct tokens present in `text`; null when the answer has no token to look for. */
export function answerTokenRetention(answer: string, text: string): number | null {
  const wanted = new Set(normalizedTokens(answer));
  if (wanted.size === 0) return null;
  const present = new Set(normalizedTokens(text));
  let kept = 0;
  for (const token of wanted) if (present.has(token)) kept++;
  return kept / wanted.size;
}
