/**
 * close() waits for the compactions in flight before it closes the stores (bounded by `waitMs`): a compaction
 * running when close is called finishes `compacted`; one cut off by `waitMs: 0` loses nothing and is rolled back
 * when the store opens again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemfold } from '../src/memfold.js';
import type { PersistenceProvider } from '../src/persistence/persistence-provider.js';
import { persistenceBackends } from './support/backends.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from './support/fake-openai-server.js';
import { orderChat } from './support/messages.js';

const [backend] = persistenceBackends();
let fake: FakeOpenAI;
let lanceRoot: string;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.setBehavior(behaviors.delay(300, behaviors.ok('Orders ORD-500 to ORD-519 were checked.')));
  lanceRoot = await mkdtemp(path.join(os.tmpdir(), 'memfold-close-'));
});
afterAll(async () => {
  await fake.close();
  await rm(lanceRoot, { recursive: true, force: true });
});

async function open(persistence: PersistenceProvider, lancedbUri: string) {
  return createMemfold({
    persistence,
    config: { lancedbUri },
    env: { OPENAI_BASE_URL: fake.baseURL, MEMFOLD_SUMMARY_MODEL: 'slow-model', MEMFOLD_MODEL_MAX_RETRIES: '0' },
    compaction: { contextWindow: 2_000 },
  });
}

describe('close()', () => {
  it('waits for a compaction in flight, which then completes', async () => {
    const { persistence, cleanup } = await backend!.open();
    const memfold = await open(persistence, await mkdtemp(path.join(lanceRoot, 'a-')));
    await memfold.append('c', orderChat(20));
    const running = memfold.compact('c', { force: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await memfold.close();
    const result = await running;
    expect(result.status, result.error).toBe('compacted');
    expect(result.modelCalls).toBeGreaterThan(0);
    await cleanup();
  });

  it('with waitMs 0 closes at once: the compaction cut off loses nothing and is rolled back on the next open', async () => {
    const { persistence, cleanup } = await backend!.open();
    const lance = await mkdtemp(path.join(lanceRoot, 'b-'));
    const memfold = await open(persistence, lance);
    await memfold.append('c', orderChat(20));
    const before = (await memfold.history('c')).map((m) => m.id);
    const running = memfold.compact('c', { force: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await memfold.close({ waitMs: 0 });
    const result = await running;
    expect(result.status).toBe('failed');

    const again = await open(persistence, lance);
    expect((await again.history('c')).map((m) => m.id)).toEqual(before);
    expect(await persistence.listPendingOperations('c')).toEqual([]);
    await again.close();
    await expect(again.close({ waitMs: -1 })).rejects.toThrow(/waitMs: must be a number from 0 to 2147483647 ms/);
    await cleanup();
  });
});
