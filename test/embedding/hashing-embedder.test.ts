import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { embedAll } from '../../src/embedding/embedder.js';
import { createHashingEmbedder, fnv1a32, hashingVector, tokenizeForHashing } from '../../src/embedding/hashing-embedder.js';
import { MemfoldError } from '../../src/errors.js';

/**
 * The vector as the embedder defines it, from the tokenizer's words and compounds with joined-string features: the
 * reference its one-scan ASCII path must equal, bit for bit.
 */
function referenceVector(text: string, dimensions: number): Float32Array {
  const stopwords = new Set(['the', 'of', 'and', 'a', 'to', 'is', 'would', 'these']);
  const { words, compounds } = tokenizeForHashing(text);
  const content = words.filter((word) => !stopwords.has(word));
  const counted = (names: string[]) => {
    const counts = new Map<string, number>();
    for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
    return counts;
  };
  const vector = new Float32Array(dimensions);
  const add = (counts: Map<string, number>, prefix: string, weight: number) => {
    for (const [name, count] of counts) {
      const hash = fnv1a32(prefix + name);
      vector[hash % dimensions] = vector[hash % dimensions]! + (hash & 0x80000000 ? -1 : 1) * weight * (1 + Math.log(count));
    }
  };
  add(counted(content), 'w:', 1);
  add(counted(compounds), 'c:', 1);
  add(counted(content.slice(1).map((word, i) => `${content[i]} ${word}`)), 'b:', 0.5);
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  return norm > 0 ? vector.map((value) => value / norm) : vector;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);

describe('hashing embedder', () => {
  it('is hashing-384 by default: 384 dimensions, batches of 256', () => {
    const embedder = createHashingEmbedder();
    expect(embedder.id).toBe('hashing-384');
    expect(embedder.dimensions).toBe(384);
    expect(embedder.maxEmbeddingsPerCall).toBe(256);
    expect(createHashingEmbedder({ dimensions: 64 }).id).toBe('hashing-64');
  });

  it('uses the reference FNV-1a 32-bit hash, so vectors are the same on every machine', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('hello')).toBe(0x4f9f2cab);
  });

  it('hashes the UTF-8 bytes TextEncoder gives, for every script and for lone surrogates, so stored vectors still match', () => {
    const reference = (text: string) => {
      let hash = 0x811c9dc5;
      for (const byte of new TextEncoder().encode(text)) hash = Math.imul(hash ^ byte, 0x01000193);
      return hash >>> 0;
    };
    const texts = [
      'café',
      'naïve résumé',
      'Ωμέγα',
      'данные',
      '東京タワー',
      'ภาษาไทย',
      '😀 emoji 👍🏽',
      'a\uD800b',
      '\uDC00x',
      'end\uD83D',
      'ÿ\u07FF\u0800\uFFFF',
    ];
    for (const text of texts) expect(fnv1a32(text), text).toBe(reference(text));
  });

  it('gives the vectors archives already hold: pinned for ASCII, Unicode and tool-output text', () => {
    // Digests of the vectors as this embedder first wrote them: a faster tokenizer or hash must leave them as they are.
    const digest = (text: string) =>
      createHash('sha256')
        .update(Buffer.from(hashingVector(text, 384).buffer))
        .digest('hex')
        .slice(0, 16);
    expect(digest('[2024-06-01 10:02] user: Please remember order ORD-501 for customer Ada Lovelace; ship to src/lib/a.ts v1.2 user@host.')).toBe(
      '80a6563760874643',
    );
    expect(digest('Réunion à 14h30 : le café coûte 3,50 € ; ﬁn. 東京タワーに行きました。 Ｆｕｌｌ ｗｉｄｔｈ İstanbul')).toBe('3362bad406c4c1bc');
    expect(digest('tool: {"sku":"SKU-7731","stock":42,"aisle":"B-12","note":"the the of of and refund refund refund"}')).toBe('0e4e8a64622a8a6a');
  });

  it('embeds ASCII text as the tokenizer defines it, bit for bit: compounds, connectors, stopwords, repeats', () => {
    // Pieces that make words, compounds (runs joined by connectors alone), broken chains and stopwords (those the
    // reference knows: the text is drawn from them) in every order.
    const pieces = [
      'the',
      'OF',
      'and',
      'would',
      'these',
      'Refund',
      'ord',
      '42',
      'src',
      'A',
      'x9',
      '.',
      '/',
      '\\',
      ':',
      '@',
      '#',
      '_',
      '-',
      ' ',
      ', ',
      '\n',
      '{"k":',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 60 }), (drawn) => {
        const text = drawn.join('');
        expect(Array.from(hashingVector(text, 64))).toEqual(Array.from(referenceVector(text, 64)));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps apart distinct words whose hashes collide', () => {
    // fnv1a32('w:zed') === fnv1a32('w:1ukqvz4vm'): two words, two counts, each in its own pairs.
    expect(fnv1a32('zed', fnv1a32('w:'))).toBe(fnv1a32('1ukqvz4vm', fnv1a32('w:')));
    const text = 'zed 1ukqvz4vm zed refund 1ukqvz4vm zed zed mzfj8fiop cfiiyxflyn';
    expect(Array.from(hashingVector(text, 384))).toEqual(Array.from(referenceVector(text, 384)));
  });

  it('continues a hash: from the hash of a prefix, the hash of prefix + text', () => {
    expect(fnv1a32('refund', fnv1a32('w:'))).toBe(fnv1a32('w:refund'));
    expect(fnv1a32('café 東京', fnv1a32('b:'))).toBe(fnv1a32('b:café 東京'));
  });

  it('is deterministic across calls and instances', async () => {
    const text = 'Deploy src/server/main.ts to host 10.0.0.7 on Friday';
    const [a] = await createHashingEmbedder().embed([text]);
    const [b, c] = await createHashingEmbedder().embed([text, text]);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(Array.from(b!)).toEqual(Array.from(c!));
  });

  it('returns L2-normalized 384-dimensional vectors, and the zero vector for text without words', async () => {
    const embedder = createHashingEmbedder();
    const [short, long, punctuation, empty] = await embedder.embed(['cat', 'the quick brown fox jumps over the lazy dog '.repeat(20), '?!... --- ***', '']);
    for (const vector of [short!, long!]) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector.length).toBe(384);
      expect(Math.sqrt(dot(vector, vector))).toBeCloseTo(1, 5);
    }
    expect(punctuation!.every((v) => v === 0)).toBe(true);
    expect(empty!.every((v) => v === 0)).toBe(true);
  });

  it('tokenizes Unicode words, numbers and path-ish tokens (whole and in parts), lowercased', () => {
    const { words, compounds } = tokenizeForHashing('Zoë opened SRC/A.ts at 3.14, then 東京 and user@host');
    expect(words).toEqual(expect.arrayContaining(['zoë', 'opened', 'src', 'a', 'ts', '3', '14', '東', '京', 'user', 'host']));
    expect(compounds).toEqual(['src/a.ts', '3.14', 'user@host']);
  });

  it('puts texts sharing rare words closer than unrelated texts', async () => {
    const embedder = createHashingEmbedder();
    const others = [
      'I had pasta for dinner and watched a movie.',
      'Refactor the billing module to use invoices.',
      'My sister moved to Lisbon last spring.',
      'The weather turned cold after the storm.',
      'We should renew the passport before July.',
      'Her guitar lessons start next Tuesday.',
      'Bake the bread at a high temperature.',
      'The meeting was moved to the large room.',
    ];
    const [query, sharing, ...unrelated] = await embedder.embed([
      'What did we decide about the Zanzibar ferry schedule?',
      'The Zanzibar ferry leaves at noon on weekdays.',
      ...others,
    ]);
    const best = Math.max(...unrelated.map((vector) => dot(query!, vector)));
    expect(dot(query!, sharing!)).toBeGreaterThan(0.3);
    expect(dot(query!, sharing!)).toBeGreaterThan(best);
    const [pathQuery, pathDoc] = await embedder.embed(['lru.ts', 'The bug is in src/cache/lru.ts line 42']);
    const bestOther = Math.max(...unrelated.map((vector) => dot(pathQuery!, vector)));
    expect(dot(pathQuery!, pathDoc!)).toBeGreaterThan(bestOther);
  });

  it('ignores function words, so sharing only "the" and "of" does not make texts similar', async () => {
    const [a, b] = await createHashingEmbedder().embed(['the history of the piano', 'the price of the car']);
    expect(Math.abs(dot(a!, b!))).toBeLessThan(0.1);
  });

  it('refuses more than maxEmbeddingsPerCall texts per call; embedAll batches any number', async () => {
    const embedder = createHashingEmbedder({ dimensions: 32 });
    const texts = Array.from({ length: 600 }, (_, i) => `text number ${i}`);
    await expect(embedder.embed(texts)).rejects.toMatchObject({ code: 'invalid_argument' });
    const vectors = await embedAll(embedder, texts);
    expect(vectors).toHaveLength(600);
    expect(Array.from(vectors[599]!)).toEqual(Array.from((await embedder.embed(['text number 599']))[0]!));
  });

  it('rejects bad dimensions and honours an aborted signal', async () => {
    expect(() => createHashingEmbedder({ dimensions: 0 })).toThrow(/dimensions/);
    expect(() => createHashingEmbedder({ dimensions: 1.5 })).toThrow(/dimensions/);
    const controller = new AbortController();
    controller.abort();
    const error = await createHashingEmbedder()
      .embed(['x'], { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(MemfoldError.isInstance(error) && error.code).toBe('embedding_error');
  });
});
