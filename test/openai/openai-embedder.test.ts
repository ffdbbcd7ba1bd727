import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { embedAll } from '../../src/embedding/embedder.js';
import { createOpenAIEmbedder } from '../../src/openai/openai-embedder.js';
import type { MemfoldError } from '../../src/errors.js';
import { createModelQueue } from '../../src/openai/openai-queue.js';
import { behaviors, fakeVector, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';

describe('createOpenAIEmbedder against the fake server', () => {
  let server: FakeOpenAI;
  beforeEach(async () => {
    server = await startFakeOpenAI({ dimensions: 6, shuffleEmbeddings: true });
  });
  afterEach(async () => {
    await server.close();
  });
  const embedder = (extra: { dimensions?: number; maxRetries?: number } = {}) =>
    createOpenAIEmbedder({
      baseURL: server.baseURL,
      model: 'fake-embed',
      timeoutMs: 2_000,
      maxRetries: extra.maxRetries ?? 1,
      retry: { sleep: async () => {} },
      ...(extra.dimensions ? { dimensions: extra.dimensions } : {}),
    });

  it('returns float vectors in input order even when the server shuffles them', async () => {
    const e = embedder();
    expect(e.id).toBe('openai:fake-embed');
    expect(e.maxEmbeddingsPerCall).toBe(96);
    expect(e.dimensions).toBe(0);
    const texts = ['alpha', 'beta', 'gamma'];
    const vectors = await e.embed(texts);
    expect(vectors).toHaveLength(3);
    vectors.forEach((v, i) => {
      expect(v).toBeInstanceOf(Float32Array);
      expect(Array.from(v)).toEqual(Array.from(Float32Array.from(fakeVector(texts[i]!, 6))));
    });
    expect(e.dimensions).toBe(6);
    expect(server.requests[0]!.body.encoding_format).toBe('float');
  });

  it('fails with embedding_error when a later response has another length', async () => {
    const e = embedder();
    await e.embed(['one']);
    server.setDimensions(4);
    const error = (await e.embed(['two']).catch((x: unknown) => x)) as MemfoldError;
    expect(error.code).toBe('embedding_error');
    expect(error.details['reason']).toBe('dimension mismatch');
  });

  it('sends configured dimensions and checks them', async () => {
    const e = embedder({ dimensions: 6 });
    expect(e.dimensions).toBe(6);
    await e.embed(['x']);
    expect(server.requests[0]!.body.dimensions).toBe(6);
  });

  it('batches through embedAll at 96 texts per call', async () => {
    const texts = Array.from({ length: 200 }, (_, i) => `text ${i}`);
    const vectors = await embedAll(embedder(), texts);
    expect(vectors).toHaveLength(200);
    expect(server.requests.map((r) => r.body.input.length)).toEqual([96, 96, 8]);
    expect(Array.from(vectors[150]!)).toEqual(Array.from(Float32Array.from(fakeVector('text 150', 6))));
  });

  it('rejects more than maxEmbeddingsPerCall texts at once', async () => {
    await expect(embedder().embed(Array.from({ length: 97 }, () => 'x'))).rejects.toThrow(/at most 96/);
  });

  it('retries 5xx and gives up with embedding_error', async () => {
    server.setBehavior(behaviors.status(503));
    const error = (await embedder({ maxRetries: 2 })
      .embed(['x'])
      .catch((x: unknown) => x)) as MemfoldError;
    expect(error.code).toBe('embedding_error');
    expect(error.details['reason']).toBe('http 503');
    expect(server.requests).toHaveLength(3);
  });

  it('shares a queue limit with other calls', async () => {
    server.setBehavior(behaviors.delay(60));
    const queue = createModelQueue({ concurrency: 1 });
    const e = createOpenAIEmbedder({ baseURL: server.baseURL, model: 'fake-embed', timeoutMs: 2_000, maxRetries: 0, queue });
    await Promise.all([e.embed(['a']), e.embed(['b']), e.embed(['c'])]);
    expect(server.maxInFlight).toBe(1);
  });
});
