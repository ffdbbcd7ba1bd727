/**
 * The kinds of what a question counts or lists, pure over WordNet (`wordnet.ts`): "How many musical instruments does
 * Maria play?" names a category whose members the conversation names instead ("guitar", "drum", "piano"). The
 * category is the noun after "how many", "what kinds of", "which" or "what"; its hyponyms are searched beside the
 * question's own words, at a lower weight. Deterministic: the same question always gives the same words.
 */
import { questionIntent } from './question-intent.js';
import { searchTerms, stem, STOP_WORDS } from './search-terms.js';
import { hyponyms, isNoun } from './wordnet.js';

/** Which questions are expanded: `count` those asking a count or total (`questionIntent`), `category` any naming a category, `all` every noun of any question. */
export type KindsOfQuestions = 'none' | 'count' | 'category' | 'all';

export interface KindsOfOptions {
  questions: KindsOfQuestions;
  /** Levels of hyponyms below the category's most frequent sense. Default 3. */
  depth?: number;
  /** Most words per category. Default 200. */
  limit?: number;
}

/** The words that open a category: "how many X", "what kind(s)/type(s)/sort(s) of X", "which X", "what X". */
const TRIGGER = /\b(?:how many|(?:what|which) (?:kinds?|types?|sorts?) of|which|what)\s+([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2})/gi;

/**
 * Verbs and auxiliaries after "what"/"which" ("what did", "which is"): no category follows; nor after a span or point
 * of time ("how many days ago", "which year", "how many times"): a time, not a category the conversation names kinds of.
 */
const NOT_A_CATEGORY = new Set(
  (
    'did does do is are was were has have had would could can should will might may must ' +
    'time times day days week weeks month months year years hour hours minute minutes date dates age'
  ).split(' '),
);

/** The noun's lemma as WordNet lists it: the word, or its singular ("sports" → "sport", "hobbies" → "hobby"). */
export function nounLemma(word: string): string | undefined {
  const w = word.toLowerCase();
  const singulars = w.endsWith('ies') ? [`${w.slice(0, -3)}y`] : w.endsWith('es') ? [w.slice(0, -2), w.slice(0, -1)] : w.endsWith('s') ? [w.slice(0, -1)] : [];
  for (const candidate of [...singulars, w]) if (candidate.length > 2 && isNoun(candidate)) return candidate;
  return undefined;
}

/** The phrase's category: its first two words as one noun ("musical instruments"), else its first noun. */
function categoryOf(phrase: string): string | undefined {
  const words = phrase.toLowerCase().split(/\s+/);
  if (words[0] === undefined || NOT_A_CATEGORY.has(words[0])) return undefined;
  if (words.length > 1 && !STOP_WORDS.has(words[1]!) && !NOT_A_CATEGORY.has(words[1]!)) {
    const pair = nounLemma(`${words[0]}_${words[1]}`);
    if (pair) return pair;
  }
  for (const word of words.slice(0, 2)) {
    if (STOP_WORDS.has(word) || NOT_A_CATEGORY.has(word)) return undefined;
    const lemma = nounLemma(word);
    if (lemma) return lemma;
  }
  return undefined;
}

/** The categories a question names (lemmas, `_` between words), in order, each once. */
export function questionCategories(question: string, questions: KindsOfQuestions): string[] {
  if (questions === 'none') return [];
  if (questions === 'count' && !questionIntent(question).aggregate) return [];
  const found: string[] = [];
  if (questions === 'all') {
    for (const word of question.toLowerCase().split(/[^a-z'-]+/)) {
      const lemma = word === '' || STOP_WORDS.has(word) ? undefined : nounLemma(word);
      if (lemma && !found.includes(lemma)) found.push(lemma);
    }
    return found;
  }
  for (const match of question.matchAll(TRIGGER)) {
    const category = categoryOf(match[1]!);
    if (category && !found.includes(category)) found.push(category);
  }
  return found;
}

/**
 * The words naming kinds of the question's categories ("guitar", "drum", "piano" for "musical instruments"), each
 * once (a compound by its head word), none of the question's own words; empty when the question names no category WordNet knows.
 */
export function kindsOf(question: string, options: KindsOfOptions): string[] {
  const own = new Set(searchTerms(question));
  const words: string[] = [];
  for (const category of questionCategories(question, options.questions)) {
    for (const name of hyponyms(category, { depth: options.depth ?? 3, limit: options.limit ?? 200 })) {
      // A compound's head names the kind ("barrel organ" → "organ"); its modifier alone would not ("barrel").
      const word = name
        .split(/[^a-z]+/)
        .filter(Boolean)
        .at(-1);
      if (word && word.length > 2 && !STOP_WORDS.has(word) && !own.has(stem(word)) && !words.includes(word)) words.push(word);
    }
  }
  return words;
}
