/**
 * `mcp --read-only` (`openArchiveBackend`) answers memory_read as the agent's process does: with a semantic
 * MEMFOLD_EMBEDDING_MODEL, the candidate messages are ranked by meaning through the endpoint too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resolveRuntimeConfig } from '../../src/config.js';
import { createMemfold } from '../../src/memfold.js';
import { openArchiveBackend } from '../../src/mcp/mcp-backends.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { orderChat } from '../support/messages.js';

let fake: FakeOpenAI;
let lancedbUri: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ dimensions: 16 });
  lancedbUri = await mkdtemp(path.join(os.tmpdir(), 'memfold-read-only-semantic-'));
});
afterAll(async () => {
  await fake.close();
  await rm(lancedbUri, { recursive: true, force: true });
});

it('ranks the archived messages it finds by meaning through the configured model', async () => {
  const env = { OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test-key', MEMFOLD_EMBEDDING_MODEL: 'fake-embedder', MEMFOLD_MODEL_MAX_RETRIES: '0' };
  fake.setBehavior(behaviors.ok('Summary of orders ORD-503.'));
  const memfold = await createMemfold({ persistence: createInMemoryPersistence(), config: { lancedbUri }, compaction: { contextWindow: 2_000 }, env });
  try {
    await memfold.append('orders', orderChat(20));
    expect((await memfold.compact('orders')).status).toBe('compacted');
  } finally {
    await memfold.close();
  }
  const backend = await openArchiveBackend(resolveRuntimeConfig({ lancedbUri }, env));
  try {
    const from = fake.requests.length;
    const read = await backend.memoryRead('orders').execute({ query: 'ORD-503' });
    expect(read.output).toContain('ORD-503');
    const inputs = fake.requests
      .slice(from)
      .filter((r) => r.path === '/v1/embeddings')
      .map((r) => r.body.input as string[]);
    // The question and the candidate messages, beside the archive's own query embedding.
    expect(inputs.some((input) => input[0] === 'ORD-503' && input.length > 1)).toBe(true);
  } finally {
    await backend.close();
  }
});
