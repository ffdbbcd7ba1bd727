/**
 * The offline embedder: deterministic feature hashing of words and word pairs. No model, no network.
 *
 * It is lexical, not semantic: two texts are close when they share words (rare ones count as much as
 * any, common English function words not at all). That is why the archive lets full-text ranking lead
 * when this embedder is in use (see src/archive/README.md).
 */
import { InvalidArgumentError, MemfoldError } from '../errors.js';
import type { Embedder } from './embedder.js';

export interface HashingEmbedderOptions {
  /** Vector length. Default 384 (the size of common small sentence models, so tables stay comparable in size). */
  dimensions?: number;
}

export const DEFAULT_HASHING_DIMENSIONS = 384;
/** Largest batch one `embed` call accepts: hashing is cheap, the limit only bounds one call's memory. */
export const HASHING_MAX_EMBEDDINGS_PER_CALL = 256;
/** Word pairs add word order but weigh less than the words themselves. */
const BIGRAM_WEIGHT = 0.5;

/** English function words: they would make every pair of texts look alike. Dropped from unigrams and bigrams. */
const STOPWORDS = new Set(
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
const ASCII_ONLY = /^[\x00-\x7f]*$/;

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

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a, 32 bits, over the UTF-8 bytes: stable across platforms and runs. The bytes are produced here, as
 * TextEncoder would (a lone surrogate as U+FFFD), without allocating: this runs once per feature of every text.
 * `from` continues a hash: from the hash of a prefix, this gives the hash of prefix + text without joining them.
 */
export function fnv1a32(text: string, from = FNV_OFFSET): number {
  let hash = from;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      hash = Math.imul(hash ^ code, FNV_PRIME);
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const low = code <= 0xdbff ? text.charCodeAt(i + 1) : Number.NaN;
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
      } else {
        code = 0xfffd;
      }
    }
    if (code < 0x800) {
      hash = Math.imul(hash ^ (0xc0 | (code >> 6)), FNV_PRIME);
    } else if (code < 0x10000) {
      hash = Math.imul(hash ^ (0xe0 | (code >> 12)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | ((code >> 6) & 0x3f)), FNV_PRIME);
    } else {
      hash = Math.imul(hash ^ (0xf0 | (code >> 18)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | ((code >> 12) & 0x3f)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | ((code >> 6) & 0x3f)), FNV_PRIME);
    }
    hash = Math.imul(hash ^ (0x80 | (code & 0x3f)), FNV_PRIME);
  }
  return hash >>> 0;
}

/** A feature's hash (its name prefixed `w:`, `c:` or `b:`, so a word never collides with a pair or a compound) and how often it occurs. */
interface Feature {
  hash: number;
  count: number;
}

/** The features of a text, each kind in the order first seen: words, compounds, and pairs of neighbouring words. */
interface Features {
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
function textFeatures(text: string): Features {
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

/** Connectors that join word runs into a compound: `. / \\ : @ # _ -`. */
const CONNECTOR = new Uint8Array(128);
for (const c of './\\:@#_-') CONNECTOR[c.charCodeAt(0)] = 1;
/** A word of letters a-z up to this long has an exact number (base 27), which is how stopwords are looked up. */
const STOPWORD_MAX_LENGTH = Math.max(...[...STOPWORDS].map((word) => word.length));
const letterCode = (word: string) => [...word].reduce((code, letter) => code * 27 + letter.charCodeAt(0) - 0x60, 0);
const STOPWORD_CODES = new Set([...STOPWORDS].map(letterCode));

/** [a-z0-9]: what a letter or digit of lowercased ASCII text is. */
const isWordCode = (code: number) => (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39);

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
function asciiFeatures(text: string): Features {
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

/** One text to a vector: sublinear term frequency, signed hashing into `dimensions` buckets, L2-normalized. */
export function hashingVector(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  const add = ({ hash, count }: Feature, weight: number): void => {
    const bucket = hash % dimensions;
    // The sign comes from the top bit, which the bucket (low bits for small sizes) barely uses.
    const sign = hash & 0x80000000 ? -1 : 1;
    // Sublinear tf: a word said ten times is not ten times as telling.
    vector[bucket] = (vector[bucket] ?? 0) + sign * weight * (1 + Math.log(count));
  };
  // Words, then compounds, then pairs, each in the order first seen: the float32 sums depend on the order.
  const found = ASCII_ONLY.test(text) ? asciiFeatures(text) : textFeatures(text);
  for (const word of found.words) add(word, 1);
  for (const compound of found.compounds) add(compound, 1);
  for (const pair of found.pairs) add(pair, BIGRAM_WEIGHT);
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  // A text without words stays the zero vector: vector search skips it, full text and list still find it.
  if (norm > 0) for (let i = 0; i < dimensions; i++) vector[i] = (vector[i] ?? 0) / norm;
  return vector;
}

/**
 * The offline deterministic embedder (`hashing-384` by default). Same text, same vector, on every machine.
 * Texts without any letter or digit embed to the zero vector.
 */
export function createHashingEmbedder(options: HashingEmbedderOptions = {}): Embedder {
  const dimensions = options.dimensions ?? DEFAULT_HASHING_DIMENSIONS;
  if (!Number.isInteger(dimensions) || dimensions < 2 || dimensions > 65_536) {
    throw new InvalidArgumentError('dimensions', `must be an integer from 2 to 65536 (got ${dimensions})`);
  }
  return {
    id: `hashing-${dimensions}`,
    dimensions,
    maxEmbeddingsPerCall: HASHING_MAX_EMBEDDINGS_PER_CALL,
    async embed(texts, embedOptions = {}) {
      if (embedOptions.signal?.aborted) {
        throw new MemfoldError('embedding_error', 'Embedding aborted', { cause: embedOptions.signal.reason });
      }
      if (!Array.isArray(texts)) throw new InvalidArgumentError('texts', 'must be an array of strings');
      if (texts.length > HASHING_MAX_EMBEDDINGS_PER_CALL) {
        throw new InvalidArgumentError('texts', `must hold at most ${HASHING_MAX_EMBEDDINGS_PER_CALL} texts per call (got ${texts.length})`);
      }
      return texts.map((text, i) => {
        if (typeof text !== 'string') throw new InvalidArgumentError(`texts[${i}]`, 'must be a string');
        return hashingVector(text, dimensions);
      });
    },
  };
}
