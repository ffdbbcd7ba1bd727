/**
 * A small semantic embedder for tests: each text's vector counts the words it holds of a few concepts (religion,
 * music), plus one constant entry so no text is the zero vector. Two texts that share no word are close when they
 * speak of the same concept, as with a sentence model.
 */
import type { Embedder } from '../../src/embedding/embedder.js';

const CONCEPTS = [
  ['church', 'religious', 'faith', 'pray', 'hymns'],
  ['guitar', 'drum', 'instruments', 'musical', 'piano'],
];

export function conceptEmbedder(options: { fail?: boolean } = {}): Embedder & { texts: string[] } {
  const texts: string[] = [];
  return {
    id: 'concepts-test',
    dimensions: CONCEPTS.length + 1,
    maxEmbeddingsPerCall: 64,
    texts,
    async embed(batch) {
      if (options.fail) throw new Error('embedding service down');
      texts.push(...batch);
      return batch.map((text) => {
        const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
        const vector = new Float32Array(CONCEPTS.length + 1);
        CONCEPTS.forEach((concept, i) => {
          vector[i] = words.filter((word) => concept.includes(word)).length;
        });
        vector[CONCEPTS.length] = 0.5;
        return vector;
      });
    },
  };
}
