/**
 * The offline embedder: deterministic feature hashing of words and word pairs. No model, no network.
 *
 * It is lexical, not semantic: two texts are close when they share words (rare ones count as much as
 * any, common English function words not at all). That is why the archive lets full-text ranking lead
 * when this embedder is in use (see src/archive/README.md).
 */
import { InvalidArgumentError, MemfoldError } from '../errors.js';
import type { Embedder } from './embedder.js';
import { hashingVector } from './hashing-vector.js';

export { fnv1a32 } from './fnv1a32.js';
export { tokenizeForHashing } from './hashing-tokens.js';
export { hashingVector } from './hashing-vector.js';

export interface HashingEmbedderOptions {
  /** Vector length. Default 384 (the size of common small sentence models, so tables stay comparable in size). */
  dimensions?: number;
}

export const DEFAULT_HASHING_DIMENSIONS = 384;
/** Largest batch one `embed` call accepts: hashing is cheap, the limit only bounds one call's memory. */
export const HASHING_MAX_EMBEDDINGS_PER_CALL = 256;

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
