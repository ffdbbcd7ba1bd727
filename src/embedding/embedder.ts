/**
 * Turns texts into vectors. The caller batches: it never sends more than `maxEmbeddingsPerCall` texts at once.
 */
export interface Embedder {
  /** Identifies the embedder (and so the vector space), e.g. `hashing-384` or `openai:text-embedding-3-small`. */
  readonly id: string;
  /** Vector length; every vector this embedder returns has exactly this many dimensions. */
  readonly dimensions: number;
  /** Largest batch one `embed` call accepts. */
  readonly maxEmbeddingsPerCall: number;
  /** One vector per text, in order. Throws MemfoldError('embedding_error') on failure. */
  embed(texts: string[], options?: { signal?: AbortSignal }): Promise<Float32Array[]>;
}

/** Embed any number of texts, respecting the embedder's batch limit. */
export async function embedAll(embedder: Embedder, texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += embedder.maxEmbeddingsPerCall) {
    const batch = texts.slice(i, i + embedder.maxEmbeddingsPerCall);
    vectors.push(...(await embedder.embed(batch, signal ? { signal } : {})));
  }
  return vectors;
}

/**
 * Whether an embedder finds meanings, not only words: any but the lexical hashing embedder (ids `hashing-*`). A
 * semantic one is fused into memory_read's ranking; the hashing one is not (words already rank).
 */
export function isSemanticEmbedder(embedder: Pick<Embedder, 'id'>): boolean {
  return !embedder.id.startsWith('hashing');
}
