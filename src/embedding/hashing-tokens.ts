/**
 * The hashing embedder's tokenizer and its tables: the general (any script) tokenizer, the stopwords both paths drop,
 * and the ASCII lookups of the one-scan path (`hashing-features.ts`).
 */

/** English function words: they would make every pair of texts look alike. Dropped from unigrams and bigrams. */
export const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her him his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to too us was we were what ' +
    'when where which who whom why will with would you your yours'
  ).split(' '),
);

/** Scripts written without spaces: each character is a word (bigrams then give character pairs). */
const UNSPACED_CLASS = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Thai}';
const UNSPACED = new RegExp(`[${UNSPACED_CLASS}]`, 'u');
/** One unspaced character, or a stretch of anything else (Latin letters, digits) inside the same run. */
const UNSPACED_PIECE = new RegExp(`[${UNSPACED_CLASS}]|[^${UNSPACED_CLASS}]+`, 'gu');
/** A compound: word runs joined by path, number or identifier connectors (`src/a.ts`, `3.14`, `user@host`, `v1-2`). */
const COMPOUND = /[\p{L}\p{M}\p{N}]+(?:[./\\:@#_-]+[\p{L}\p{M}\p{N}]+)*/gu;
const PART = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * Lowercased tokens of a text. `words` are the letter/digit runs in order (the basis of bigrams);
 * `compounds` are path-ish or dotted tokens kept whole (`src/a.ts`, `1.5`) in addition to their parts.
 */
export function tokenizeForHashing(text: string): { words: string[]; compounds: string[] } {
  const words: string[] = [];
  const compounds: string[] = [];
  // The embedder reads ASCII text in one scan of its own (`asciiFeatures`), which gives what this gives.
  const lowered = text.normalize('NFKC').toLowerCase();
  for (const match of lowered.matchAll(COMPOUND)) {
    const compound = match[0];
    const parts = compound.match(PART) ?? [];
    if (parts.length > 1) compounds.push(compound);
    for (const part of parts) {
      if (UNSPACED.test(part)) {
        // Split runs of unspaced scripts into characters, keeping any Latin/digit stretches whole.
        words.push(...(part.match(UNSPACED_PIECE) ?? []));
      } else {
        words.push(part);
      }
    }
  }
  return { words, compounds };
}

/** Connectors that join word runs into a compound: `. / \\ : @ # _ -`. */
export const CONNECTOR = new Uint8Array(128);
for (const c of './\\:@#_-') CONNECTOR[c.charCodeAt(0)] = 1;
/** A word of letters a-z up to this long has an exact number (base 27), which is how stopwords are looked up. */
export const STOPWORD_MAX_LENGTH = Math.max(...[...STOPWORDS].map((word) => word.length));
const letterCode = (word: string) => [...word].reduce((code, letter) => code * 27 + letter.charCodeAt(0) - 0x60, 0);
export const STOPWORD_CODES = new Set([...STOPWORDS].map(letterCode));

/** [a-z0-9]: what a letter or digit of lowercased ASCII text is. */
export const isWordCode = (code: number) => (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39);
