/**
 * The features of a text the hashing embedder sums: words, compounds and pairs of neighbouring words, each hashed and
 * counted. Two paths give the same features: the tokenizer's (any text) and a one-scan path for ASCII text.
 */
import { FNV_PRIME, fnv1a32 } from './fnv1a32.js';
import { CONNECTOR, isWordCode, STOPWORD_CODES, STOPWORD_MAX_LENGTH, STOPWORDS, tokenizeForHashing } from './hashing-tokens.js';

/** A feature's hash (its name prefixed `w:`, `c:` or `b:`, so a word never collides with a pair or a compound) and how often it occurs. */
export interface Feature {
  hash: number;
  count: number;
}

/** The features of a text, each kind in the order first seen: words, compounds, and pairs of neighbouring words. */
export interface Features {
  words: Iterable<Feature>;
  compounds: Iterable<Feature>;
  pairs: Iterable<Feature>;
}

/** The hash states after each feature's prefix. */
const WORD_PREFIX = fnv1a32('w:');
const COMPOUND_PREFIX = fnv1a32('c:');
const PAIR_PREFIX = fnv1a32('b:');

/** Counts features by name, keeping the order first seen. */
function featureCounter(prefix: number): { add(name: string): void; features: Map<string, Feature> } {
  const features = new Map<string, Feature>();
  return {
    features,
    add(name) {
      const seen = features.get(name);
      if (seen) seen.count++;
      else features.set(name, { hash: fnv1a32(name, prefix), count: 1 });
    },
  };
}

/** Any text: the tokenizer's words and compounds, stopwords dropped from words and pairs. */
export function textFeatures(text: string): Features {
  const { words, compounds } = tokenizeForHashing(text);
  const found = { words: featureCounter(WORD_PREFIX), compounds: featureCounter(COMPOUND_PREFIX), pairs: featureCounter(PAIR_PREFIX) };
  const content = words.filter((word) => !STOPWORDS.has(word));
  for (const word of content) found.words.add(word);
  for (const compound of compounds) found.compounds.add(compound);
  for (let i = 1; i < content.length; i++) found.pairs.add(`${content[i - 1]} ${content[i]}`);
  return { words: found.words.features.values(), compounds: found.compounds.features.values(), pairs: found.pairs.features.values() };
}

interface WordFeature extends Feature {
  /** Numbers the distinct words in the order first seen, to key pairs by number instead of by a joined string. */
  id: number;
  /** The hash state of the pair this word opens, up to its second word: `b:{word} `. */
  pairState: number;
  /** Where the word first occurs in the lowercased text, to tell it from another word with the same hash. */
  start: number;
  length: number;
  /** The pairs this word opens, by the id of their second word. */
  followers?: Map<number, Feature>;
}

/** True when `lowered` holds the same characters at `start` as at `other.start`, over `other.length`. */
function sameWord(lowered: string, start: number, other: WordFeature): boolean {
  for (let k = 0; k < other.length; k++) if (lowered.charCodeAt(start + k) !== lowered.charCodeAt(other.start + k)) return false;
  return true;
}

/**
 * ASCII text in one scan, with the features `textFeatures` finds (and so the same vector, bit for bit): words are
 * the [a-z0-9] runs of the lowercased text, a compound is a chain of two or more runs each joined to the next by
 * connectors alone, and pairs are found by their words' numbers, their hash continued from the first word's state. Words are
 * hashed as they are scanned and found again by that hash (checked letter by letter, a collision kept apart), so no
 * string is made for them. Most archived text is ASCII, and this takes a fraction of the time of the patterns.
 */
export function asciiFeatures(text: string): Features {
  const lowered = text.toLowerCase();
  const words: WordFeature[] = [];
  const byHash = new Map<number, WordFeature>();
  // Distinct words whose hash another word took first: rare, and then looked up by their text.
  const collided = new Map<string, WordFeature>();
  const pairs: Feature[] = [];
  const compounds = featureCounter(COMPOUND_PREFIX);
  let previous: WordFeature | undefined;
  // The chain of runs the current compound would be: where it starts, how many runs, where its last run ends.
  let chainStart = 0;
  let chainRuns = 0;
  let chainEnd = 0;
  // True while every character since the last run is a connector.
  let joined = false;
  const closeChain = () => {
    if (chainRuns > 1) compounds.add(lowered.slice(chainStart, chainEnd));
  };
  const findWord = (hash: number, start: number, length: number): WordFeature => {
    const first = byHash.get(hash);
    if (first && first.length === length && sameWord(lowered, start, first)) return first;
    const key = first ? lowered.slice(start, start + length) : '';
    const other = first ? collided.get(key) : undefined;
    if (other) return other;
    const pairState = fnv1a32(' ', fnv1a32(lowered.slice(start, start + length), PAIR_PREFIX));
    const created: WordFeature = { hash, count: 0, id: words.length, pairState, start, length };
    words.push(created);
    if (first) collided.set(key, created);
    else byHash.set(hash, created);
    return created;
  };
  const length = lowered.length;
  for (let i = 0; i < length; ) {
    const code = lowered.charCodeAt(i);
    if (!isWordCode(code)) {
      if (CONNECTOR[code] !== 1) joined = false;
      i++;
      continue;
    }
    const start = i;
    // The word's hash (from the `w:` prefix) and, while it is all letters and short, its stopword code.
    let hash = WORD_PREFIX;
    let letters = 0;
    for (; i < length; i++) {
      const next = lowered.charCodeAt(i);
      // isWordCode spelled out: this loop runs once per character of every archived text.
      const letter = next >= 0x61 && next <= 0x7a;
      if (!(letter || (next >= 0x30 && next <= 0x39))) break;
      hash = Math.imul(hash ^ next, FNV_PRIME);
      letters = letter && letters >= 0 ? letters * 27 + next - 0x60 : -1;
    }
    if (chainRuns > 0 && joined) chainRuns++;
    else {
      closeChain();
      chainStart = start;
      chainRuns = 1;
    }
    chainEnd = i;
    joined = true;
    if (i - start <= STOPWORD_MAX_LENGTH && STOPWORD_CODES.has(letters)) continue;
    const word = findWord(hash >>> 0, start, i - start);
    word.count++;
    if (previous) {
      previous.followers ??= new Map();
      const pair = previous.followers.get(word.id);
      if (pair) pair.count++;
      else {
        const created = { hash: fnv1a32(lowered.slice(start, i), previous.pairState), count: 1 };
        previous.followers.set(word.id, created);
        pairs.push(created);
      }
    }
    previous = word;
  }
  closeChain();
  return { words, compounds: compounds.features.values(), pairs };
}
