/**
 * memory_read's semantic signal, for a configured semantic embedder: each candidate item's cosine similarity to the
 * question, spread so that the items' mean is 0 and the closest is 1 (below the mean counts 0). Embedders squeeze
 * cosines into a narrow band; what tells is how far an item stands above the rest.
 */
import { embedAll, type Embedder } from '../embedding/embedder.js';

/** Texts whose vectors a tool keeps, per embedder: a question's candidates come back in the next questions. */
const CACHED_TEXTS = 20_000;

export interface VectorCache {
  get(text: string): Float32Array | undefined;
  set(text: string, vector: Float32Array): void;
}

/** A bounded cache of vectors by text (oldest out first). */
export function vectorCache(size = CACHED_TEXTS): VectorCache {
  const vectors = new Map<string, Float32Array>();
  return {
    get: (text) => vectors.get(text),
    set(text, vector) {
      if (vectors.size >= size) vectors.delete(vectors.keys().next().value!);
      vectors.set(text, vector);
    },
  };
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * The vectors of `texts`, those not in the cache embedded in batches. Read from the cache before the new ones go in:
 * storing them may evict a vector this call reads.
 */
async function vectorsOf(embedder: Embedder, texts: readonly string[], cache: VectorCache): Promise<Float32Array[]> {
  const vectors = new Map<string, Float32Array>();
  for (const text of texts) {
    const cached = cache.get(text);
    if (cached !== undefined) vectors.set(text, cached);
  }
  const missing = [...new Set(texts.filter((text) => !vectors.has(text)))];
  const found = await embedAll(embedder, missing);
  missing.forEach((text, i) => {
    vectors.set(text, found[i]!);
    cache.set(text, found[i]!);
  });
  return texts.map((text) => vectors.get(text)!);
}

/**
 * Each text's closeness to the query in [0, 1]: (cosine − mean) / (best − mean), 0 at or below the mean. All 0 when
 * no text stands above the others.
 */
export async function semanticScores(embedder: Embedder, query: string, texts: readonly string[], cache: VectorCache): Promise<number[]> {
  if (texts.length === 0) return [];
  const [wanted, ...vectors] = await vectorsOf(embedder, [query, ...texts], cache);
  const cosines = vectors.map((vector) => cosine(wanted!, vector));
  const mean = cosines.reduce((sum, c) => sum + c, 0) / cosines.length;
  const best = Math.max(...cosines);
  if (!(best > mean)) return cosines.map(() => 0);
  return cosines.map((c) => Math.max(0, (c - mean) / (best - mean)));
}
