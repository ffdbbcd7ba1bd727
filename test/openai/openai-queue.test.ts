/**
 * One queue per memfold for every remote call: summaries and embeddings share MEMFOLD_MODEL_CONCURRENCY and
 * MEMFOLD_MODEL_RPM, and both obey the deadline. Against the fake server with latency and a 429 rate limit.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/conversation/types.js';
import type { MemfoldError } from '../../src/errors.js';
import { createMemfold } from '../../src/memfold.js';
import { createOpenAIEmbedder } from '../../src/openai/openai-embedder.js';
import { persistenceBackends } from '../support/backends.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from '../support/fake-openai-server.js';

function chat(turns: number, tag: string): NewMessage[] {
  return Array.from({ length: turns }, (_, t) => [
    {
      role: 'user' as const,
      content: `Please remember order ${tag}-${500 + t} for Ada Lovelace. ${'context '.repeat(20)}`,
      createdAt: new Date(Date.UTC(2024, 5, 1, 10, 2 * t)).toISOString(),
    },
    {
      role: 'assistant' as const,
      content: `Noted ${tag}-${500 + t}. ${'confirmation '.repeat(20)}`,
      createdAt: new Date(Date.UTC(2024, 5, 1, 10, 2 * t + 1)).toISOString(),
    },
  ]).flat();
}

const [backend] = persistenceBackends();
let lanceRoot: string;
let fake: FakeOpenAI | undefined;

beforeAll(async () => {
  lanceRoot = await mkdtemp(path.join(os.tmpdir(), 'memfold-queue-'));
});
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});
afterAll(async () => {
  await rm(lanceRoot, { recursive: true, force: true });
});

/** Compacts `conversations` conversations at once, summaries and embeddings from the fake server, then searches each. */
async function compactConcurrently(server: FakeOpenAIOptions, env: Record<string, string>, conversations: number) {
  fake = await startFakeOpenAI({ dimensions: 16, ...server });
  const { persistence, cleanup } = await backend!.open();
  const memfold = await createMemfold({
    persistence,
    config: { lancedbUri: await mkdtemp(path.join(lanceRoot, 'l-')) },
    // Small chunks: each compaction makes several requests, so the load is a burst.
    compaction: { contextWindow: 2_000, chunkTokens: 300 },
    env: {
      OPENAI_BASE_URL: fake.baseURL,
      MEMFOLD_SUMMARY_MODEL: 'fake-summarizer',
      MEMFOLD_EMBEDDING_MODEL: 'fake-embedder',
      // No retries: a request the server refuses becomes a fallback summary (or a failed archive write) at once.
      MEMFOLD_MODEL_MAX_RETRIES: '0',
      ...env,
    },
  });
  try {
    const ids = Array.from({ length: conversations }, (_, i) => `conv-${i}`);
    for (const id of ids) await memfold.append(id, chat(20, id.toUpperCase()));
    const results = await Promise.all(ids.map((id) => memfold.compact(id)));
    await Promise.all(ids.map((id) => memfold.archive.search({ conversationId: id, query: `${id.toUpperCase()}-503` })));
    return { results, requests: fake.requests };
  } finally {
    await memfold.close();
    await cleanup();
  }
}

describe('one queue for summaries and embeddings', () => {
  it("with MEMFOLD_MODEL_RPM at the server's limit, every summary comes from the model (no 429, no fallback)", async () => {
    const { results } = await compactConcurrently(
      { rateLimit: { requestsPerMinute: 600 }, latencyMs: 5 },
      { MEMFOLD_MODEL_RPM: '600', MEMFOLD_MODEL_CONCURRENCY: '8' },
      2,
    );
    for (const result of results) {
      expect(result.status, result.error).toBe('compacted');
      expect(result.modelCalls).toBeGreaterThan(1);
      expect(result.fallbacks).toEqual([]);
    }
    expect(fake!.rateLimited).toBe(0);
  });

  it('without MEMFOLD_MODEL_RPM such load meets the rate limit (what the setting prevents)', async () => {
    // A tighter limit than above (two requests a second), so even a slow machine sends faster than it allows.
    const { results } = await compactConcurrently({ rateLimit: { requestsPerMinute: 120 }, latencyMs: 5 }, { MEMFOLD_MODEL_CONCURRENCY: '8' }, 2);
    expect(fake!.rateLimited).toBeGreaterThan(0);
    const reasons = results.flatMap((r) => r.fallbacks.map((f) => f.reason));
    const failed = results.filter((r) => r.status === 'failed');
    expect(reasons.includes('http 429') || failed.length > 0).toBe(true);
  });

  it('chat and embeddings share MEMFOLD_MODEL_CONCURRENCY: never more requests in flight together', async () => {
    const { results, requests } = await compactConcurrently({ latencyMs: 60 }, { MEMFOLD_MODEL_CONCURRENCY: '2' }, 3);
    for (const result of results) expect(result.status, result.error).toBe('compacted');
    expect(requests.some((r) => r.path === '/v1/chat/completions')).toBe(true);
    expect(requests.some((r) => r.path === '/v1/embeddings')).toBe(true);
    expect(fake!.maxInFlight).toBe(2);
  });
});

describe('the embedder obeys the deadline', () => {
  it('stops at deadlineMs, whatever its timeout and retries allow, with reason "deadline exceeded (...)"', async () => {
    fake = await startFakeOpenAI({ behavior: behaviors.delay(30_000) });
    const embedder = createOpenAIEmbedder({ baseURL: fake.baseURL, model: 'fake-embedder', timeoutMs: 20_000, maxRetries: 3, deadlineMs: 300 });
    const started = Date.now();
    const error = (await embedder.embed(['hello world']).catch((e: unknown) => e)) as MemfoldError;
    const elapsed = Date.now() - started;
    expect(error.code).toBe('embedding_error');
    expect(error.details['stoppedBy']).toBe('deadline');
    expect(String(error.details['reason'])).toMatch(/^deadline exceeded/);
    expect(fake.requests.length).toBeLessThanOrEqual(1);
    // Far below the 20 s timeout and the server's 30 s: the deadline ended it, whatever the machine's load.
    expect(elapsed).toBeLessThan(15_000);
  });

  it("defaults to twice its timeout, the chat adapter's rule", async () => {
    fake = await startFakeOpenAI({ behavior: behaviors.delay(5_000) });
    const embedder = createOpenAIEmbedder({
      baseURL: fake.baseURL,
      model: 'fake-embedder',
      timeoutMs: 200,
      maxRetries: 10,
      retry: { initialDelayMs: 1, maxDelayMs: 1 },
    });
    const error = (await embedder.embed(['hello world']).catch((e: unknown) => e)) as MemfoldError;
    expect(error.details['stoppedBy']).toBe('deadline');
    // Two 200 ms attempts fit in 400 ms; ten retries would not.
    expect(fake.requests.length).toBeLessThanOrEqual(3);
  });
});

describe('MEMFOLD_MODEL_RPM', () => {
  it('is read as an integer >= 1, unset meaning no limit, and refused naming the variable otherwise', async () => {
    const { resolveRuntimeConfig } = await import('../../src/config.js');
    expect(resolveRuntimeConfig({}, {}).modelRequestsPerMinute).toBeUndefined();
    expect(resolveRuntimeConfig({}, { MEMFOLD_MODEL_RPM: '120' }).modelRequestsPerMinute).toBe(120);
    expect(() => resolveRuntimeConfig({}, { MEMFOLD_MODEL_RPM: '0' })).toThrow(/MEMFOLD_MODEL_RPM: must be an integer >= 1/);
    expect(() => resolveRuntimeConfig({}, { MEMFOLD_MODEL_RPM: '1.5' })).toThrow(/MEMFOLD_MODEL_RPM/);
    expect(() => resolveRuntimeConfig({ modelRequestsPerMinute: 0 }, {})).toThrow(/config\.modelRequestsPerMinute: must be an integer >= 1/);
  });
});
