/**
 * The remote path wired by createMemfold from the environment: the real `openai` client against a
 * fake OpenAI-compatible server on 127.0.0.1, for summaries and embeddings. Failures fall back to the
 * extractive summarizer and the result says so.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/conversation/types.js';
import { createMemfold } from '../../src/memfold.js';
import { persistenceBackends } from '../support/backends.js';
import { orderChat } from '../support/messages.js';
import { behaviors, startFakeOpenAI, type FakeBehavior, type FakeOpenAI } from '../support/fake-openai-server.js';

const [backend] = persistenceBackends();
let fake: FakeOpenAI;
let lanceRoot: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ dimensions: 16 });
  lanceRoot = await mkdtemp(path.join(os.tmpdir(), 'memfold-openai-'));
});
afterAll(async () => {
  await fake.close();
  await rm(lanceRoot, { recursive: true, force: true });
});

async function compactWith(behavior: FakeBehavior, env: Record<string, string> = {}) {
  fake.setBehavior(behavior);
  const { persistence, cleanup } = await backend!.open();
  const memfold = await createMemfold({
    persistence,
    config: { lancedbUri: await mkdtemp(path.join(lanceRoot, 'l-')) },
    compaction: { contextWindow: 2_000 },
    env: { OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test-key', MEMFOLD_SUMMARY_MODEL: 'fake-summarizer', MEMFOLD_MODEL_MAX_RETRIES: '0', ...env },
  });
  try {
    await memfold.append('orders', orderChat(20));
    const before = fake.requests.length;
    const result = await memfold.compact('orders');
    const requests = fake.requests.slice(before);
    const batches = await memfold.archive.list({ conversationId: 'orders', kind: 'summary' });
    const hits = await memfold.archive.search({ conversationId: 'orders', query: 'ORD-503' });
    const readFrom = fake.requests.length;
    const read = await memfold.memoryRead('orders').execute({ query: 'ORD-503' });
    return { result, requests, batches, hits, read, readRequests: fake.requests.slice(readFrom) };
  } finally {
    await memfold.close();
    await cleanup();
  }
}

describe('OpenAI-compatible summaries and embeddings', () => {
  it('sends the custom `prompt` of createMemfold as the system prompt, {{maxTokens}} filled in, and the lines as the transcript', async () => {
    fake.setBehavior(behaviors.ok('User asked: keep orders.'));
    const { persistence, cleanup } = await backend!.open();
    const memfold = await createMemfold({
      persistence,
      config: { lancedbUri: await mkdtemp(path.join(lanceRoot, 'l-')) },
      compaction: { contextWindow: 2_000 },
      prompt: 'Summarize in at most {{maxTokens}} tokens, orders first.',
      env: { OPENAI_BASE_URL: fake.baseURL, MEMFOLD_SUMMARY_MODEL: 'fake-summarizer', MEMFOLD_MODEL_MAX_RETRIES: '0' },
    });
    try {
      await memfold.append('custom', orderChat(20));
      const before = fake.requests.length;
      const result = await memfold.compact('custom');
      expect(result.status, result.error).toBe('compacted');
      const chats = fake.requests.slice(before).filter((r) => r.path === '/v1/chat/completions');
      expect(chats[0]!.body.messages[0].content).toMatch(/^Summarize in at most \d+ tokens, orders first\.$/);
      expect(chats[0]!.body.messages[1].content).toMatch(/<transcript>\n\[2024-06-01T10:\d\d:00\.000Z\] user: Please remember order ORD-5\d\d/);
    } finally {
      await memfold.close();
      await cleanup();
    }
  });

  it("summarizes through the real client: the server's text becomes the batch, no fallback", async () => {
    const { result, requests, batches } = await compactWith(behaviors.ok('User asked: keep orders ORD-500 to ORD-510 for Ada Lovelace.'));
    expect(result.status, result.error).toBe('compacted');
    expect(result.fallbacks).toEqual([]);
    const chats = requests.filter((r) => r.path === '/v1/chat/completions');
    expect(chats.length).toBe(result.modelCalls);
    expect(chats[0]!.body.model).toBe('fake-summarizer');
    expect(chats[0]!.headers.authorization).toBe('Bearer test-key');
    expect(chats[0]!.body.messages[0].role).toBe('system');
    expect(chats[0]!.body.messages[1].content).toContain('<transcript>');
    expect(batches[0]!.content).toContain('User asked: keep orders ORD-500 to ORD-510');
  });

  it.each([
    ['HTTP 500', behaviors.status(500), {}, /500/],
    ['a timeout', behaviors.delay(3_000), { MEMFOLD_MODEL_TIMEOUT_MS: '300' }, /timeout|timed out/i],
    ['empty text', behaviors.empty(), {}, /empty/],
    // maxSummaryTokens is 160 for this window: the summary must not outgrow it, nor arrive cut off or corrupt.
    ['truncated text', behaviors.truncated('Summary: ORD-500 was cut'), {}, /^truncated output$/],
    ['over-long text', behaviors.overLong(1_000), {}, /^over-long output$/],
    ['text that is not UTF-8', behaviors.invalidUtf8(), {}, /^invalid utf-8$/],
  ])('%s falls back to the extractive summary and says so in the result', async (_name, behavior, env, reason) => {
    const { result, batches, hits } = await compactWith(behavior, env);
    expect(result.status, result.error).toBe('compacted');
    expect(result.fallbacks.length).toBe(result.modelCalls);
    expect(result.fallbacks[0]).toMatchObject({ from: 'openai:fake-summarizer' });
    expect(result.fallbacks[0]!.reason).toMatch(reason);
    // The extractive summary keeps the order numbers and dates; none of the faulty text is archived.
    const archived = batches.map((b) => b.content).join('\n');
    expect(archived).toMatch(/ORD-50\d/);
    expect(archived).not.toMatch(/\uFFFD|\p{Cs}|Summary:/u);
    expect(hits.length).toBeGreaterThan(0);
  });

  it('embeds archive entries and queries through the embeddings endpoint when a model is configured', async () => {
    const { result, requests, hits } = await compactWith(behaviors.ok('Summary of orders ORD-503.'), { MEMFOLD_EMBEDDING_MODEL: 'fake-embedder' });
    expect(result.status, result.error).toBe('compacted');
    const embeddings = requests.filter((r) => r.path === '/v1/embeddings');
    // The first write to a new table embeds one probe text to learn the vector size, then the entries in batches.
    expect(embeddings[0]!.body.input).toEqual(['memfold']);
    expect(embeddings.some((r) => r.body.input.length > 1)).toBe(true);
    expect(embeddings.every((r) => r.body.model === 'fake-embedder')).toBe(true);
    expect(hits.some((h) => h.entry.content.includes('ORD-503'))).toBe(true);
  });

  it('memory_read ranks the archived messages it finds by meaning through the configured model', async () => {
    const { result, read, readRequests } = await compactWith(behaviors.ok('Summary of orders ORD-503.'), { MEMFOLD_EMBEDDING_MODEL: 'fake-embedder' });
    expect(result.status, result.error).toBe('compacted');
    expect(read.output).toContain('ORD-503');
    // The question and the candidate messages, in one request beside the archive's own query embedding.
    const inputs = readRequests.filter((r) => r.path === '/v1/embeddings').map((r) => r.body.input as string[]);
    const ranking = inputs.find((input) => input[0] === 'ORD-503' && input.length > 1);
    expect(ranking?.some((text) => text.startsWith('Please remember order ORD-503'))).toBe(true);
  });
});
