/**
 * The two rankings of the in-memory archive's search, pure: BM25 over the entries' words, and cosine
 * similarity of their vectors to the query's. The archive fuses them with `lancedb/rrf.ts`, as the
 * LanceDB adapter does.
 *
 * Words come from `ranking/search-terms.ts`: lower case, accents folded, split at anything that is not a
 * letter or digit, English function and question words dropped, and a light stripper of plural, -ing and
 * -ed endings. LanceDB's full-text index differs: its simple tokenizer splits at whitespace and
 * punctuation, it drops its own English stop-word list and stems with Snowball, which also strips
 * derivational endings (-ness, -ational, -ly ...). So a word pair may meet in one archive and not in the
 * other, and scores differ. BM25 statistics here come from the entries searched (one conversation, after
 * the filters), where LanceDB's are table-wide.
 */
import { bm25Scores } from '../ranking/bm25.js';
import { searchTerms } from '../ranking/search-terms.js';

export interface Ranked {
  key: string;
  score: number;
}

/** Best first, ties by key, at most `limit`. */
function top(scored: Ranked[], limit: number): string[] {
  return scored
    .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, limit)
    .map((item) => item.key);
}

/** The words an entry is found by (computed once, on write). */
export function entryTerms(content: string): string[] {
  return searchTerms(content);
}

/** Keys of the documents sharing a word with the query, by BM25 (k1 1.2, b 0.75), best first. */
export function fullTextRanking(docs: ReadonlyArray<{ key: string; terms: readonly string[] }>, query: string, limit: number): string[] {
  const wanted = searchTerms(query);
  if (wanted.length === 0) return [];
  const scores = bm25Scores(
    docs.map((doc) => doc.terms),
    wanted,
  );
  // A document sharing no word scores 0: full text does not find it.
  return top(
    docs.map((doc, i) => ({ key: doc.key, score: scores[i]! })).filter((item) => item.score > 0),
    limit,
  );
}

/** Keys of the documents by cosine similarity to `query`, best first; vectors of another size or zero are skipped. */
export function vectorRanking(docs: ReadonlyArray<{ key: string; vector?: Float32Array }>, query: Float32Array, limit: number): string[] {
  const queryNorm = norm(query);
  if (queryNorm === 0) return [];
  const scored = docs.flatMap((doc) => {
    if (doc.vector === undefined || doc.vector.length !== query.length) return [];
    const docNorm = norm(doc.vector);
    if (docNorm === 0) return [];
    let dot = 0;
    for (let i = 0; i < query.length; i++) dot += query[i]! * doc.vector[i]!;
    // Every vector is a neighbour, however far, as in LanceDB's nearest-neighbour search.
    return [{ key: doc.key, score: dot / (queryNorm * docNorm) }];
  });
  return top(scored, limit);
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (const value of vector) sum += value * value;
  return Math.sqrt(sum);
}
