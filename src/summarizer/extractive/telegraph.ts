/**
 * Telegraphic style: drop articles, copulas, filler and interjections ("I think", "you know", "really",
 * "so", "just", "wow") while keeping every content word, negation, number, name and symbol.
 * Only plain alphabetic tokens are ever dropped, so paths, ids and code survive untouched.
 */

const FILLER_PHRASES = /\b(?:i think|i guess|i mean|i feel like|you know|you see|kind of|sort of|to be honest|tbh|at the end of the day|of course)\b,?\s*/gi;

const DROP = new Set([
  'a',
  'an',
  'the',
  'am',
  'is',
  'are',
  'was',
  'were',
  'be',
  'been',
  'being',
  'really',
  'just',
  'so',
  'very',
  'actually',
  'basically',
  'literally',
  'totally',
  'definitely',
  'honestly',
  'seriously',
  'absolutely',
  'quite',
  'truly',
  'super',
  'oh',
  'wow',
  'hey',
  'hi',
  'hello',
  'yeah',
  'yep',
  'um',
  'uh',
  'hmm',
  'haha',
  'hahaha',
  'lol',
  'omg',
  'aww',
  'ooh',
  'ah',
  'anyway',
  'anyways',
  // pronouns, auxiliaries and the most frequent prepositions: the speaker prefix says who, the rest is grammar
  'i',
  'me',
  'my',
  'myself',
  'you',
  'your',
  'yours',
  'it',
  'its',
  'we',
  'us',
  'our',
  'they',
  'them',
  'their',
  'he',
  'him',
  'his',
  'she',
  'her',
  'this',
  'that',
  'these',
  'those',
  'which',
  'who',
  'whom',
  "i'm",
  "i've",
  "i'd",
  "i'll",
  "you're",
  "you've",
  "it's",
  "we're",
  "we've",
  "they're",
  "that's",
  "there's",
  'do',
  'does',
  'did',
  'have',
  'has',
  'had',
  'can',
  'could',
  'would',
  'should',
  'shall',
  'might',
  'must',
  'and',
  'of',
  'for',
  'with',
  'at',
  'in',
  'on',
  'about',
  'as',
  'by',
  'some',
  'any',
  'all',
  'there',
  'here',
  'too',
  'also',
  'then',
  'than',
  'such',
  'much',
  'lot',
  'lots',
  'bit',
  'thing',
  'things',
  'stuff',
]);

/** Tokens that are only dropped as the first word of a sentence (`Well, ...`, `Like, ...`). */
const DROP_INITIAL = new Set(['well', 'like', 'and', 'but', 'also', 'now']);

export function telegraph(sentence: string): string {
  const text = sentence
    .replace(/\*\*|__|^#+\s+/g, '') // markdown emphasis and headings
    .replace(/^\s*(?:[-*•]|\d{1,2}\.)\s+/, '') // list markers
    .replace(FILLER_PHRASES, '');
  const out: string[] = [];
  for (const token of text.split(/\s+/)) {
    if (token === '') continue;
    const match = /^([A-Za-z]+(?:['\u2019][A-Za-z]+)?)([.,!?;:]*)$/.exec(token);
    if (match) {
      const word = match[1]!;
      const lower = word.toLowerCase().replace('\u2019', "'");
      const initial = out.length === 0;
      // A capitalized word inside a sentence is a name ("Super Bowl"), an all-caps one an acronym ("AM"): keep both.
      const acronym = word.length > 1 && word === word.toUpperCase();
      const nameLike = acronym || (!initial && word[0] !== word[0]!.toLowerCase() && !/^i(?:['\u2019]|$)/i.test(word));
      if (!nameLike && (DROP.has(lower) || (initial && DROP_INITIAL.has(lower)))) {
        const punctuation = match[2]!.replace(/,/g, '');
        const last = out[out.length - 1];
        if (punctuation && last !== undefined && !/[.!?;:]$/.test(last)) out[out.length - 1] = last + punctuation[0];
        continue;
      }
    }
    out.push(token);
  }
  return out
    .join(' ')
    .replace(/^[,;:\s]+/, '')
    .replace(/([!?.])\1+/g, '$1')
    .replace(/\s+([,.;:!?])(?=\s|$)/g, '$1')
    .replace(/[.!,;:\s]+$/, '') // units are joined with "; ": a closing period or "!" is noise
    .trim();
}
