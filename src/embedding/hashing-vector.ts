/** One text to its hashing vector: the features of `hashing-features.ts`, summed into signed buckets. */
import { asciiFeatures, type Feature, textFeatures } from './hashing-features.js';

/** Word pairs add word order but weigh less than the words themselves. */
const BIGRAM_WEIGHT = 0.5;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

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
