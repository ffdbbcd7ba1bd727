/**
 * Okapi BM25 over small in-memory collections (the messages of a few transcript segments, or one whole
 * conversation for the eval's baseline). Pure. Document frequencies come from the collection given.
 */

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface Bm25Options {
  k1?: number;
  b?: number;
  /** A query term's weight (its idf times this); 1 for a term not listed. */
  weights?: ReadonlyMap<string, number>;
}

/** Score of each document (a list of terms) for the query terms; 0 when it shares none. */
export function bm25Scores(docs: ReadonlyArray<readonly string[]>, query: readonly string[], options: Bm25Options = {}): number[] {
  const k1 = options.k1 ?? BM25_K1;
  const b = options.b ?? BM25_B;
  const wanted = [...new Set(query)];
  if (docs.length === 0 || wanted.length === 0) return docs.map(() => 0);
  const df = new Map<string, number>(wanted.map((t) => [t, 0]));
  const tfs = docs.map((doc) => {
    const tf = new Map<string, number>();
    for (const term of doc) if (df.has(term)) tf.set(term, (tf.get(term) ?? 0) + 1);
    for (const term of tf.keys()) df.set(term, df.get(term)! + 1);
    return tf;
  });
  const n = docs.length;
  const avgLength = docs.reduce((s, d) => s + d.length, 0) / n || 1;
  const weight = (t: string) => options.weights?.get(t) ?? 1;
  const idf = new Map([...df].map(([t, f]) => [t, weight(t) * Math.log(1 + (n - f + 0.5) / (f + 0.5))]));
  return tfs.map((tf, i) => {
    let score = 0;
    const norm = k1 * (1 - b + (b * docs[i]!.length) / avgLength);
    for (const [term, f] of tf) score += idf.get(term)! * ((f * (k1 + 1)) / (f + norm));
    return score;
  });
}
