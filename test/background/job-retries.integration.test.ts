/**
 * One retry loop per call path: a compaction whose embedding call fails for good is not retried by its background
 * job on top of the embedding client's own retries. Counted on the fake OpenAI server: the client's attempts once,
 * not (job retries + 1) × (client retries + 1).
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMemfold } from '../../src/memfold.js';
import type { MemfoldEvent } from '../../src/memfold-options.js';
import { copyPgliteTemplate } from '../support/backends.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { orderChat } from '../support/messages.js';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({ behavior: behaviors.status(500) });
});
afterAll(() => fake.close());

it('an embedding call the client retried twice fails the job once: three embedding requests, no job retry', async () => {
  const { root } = await copyPgliteTemplate();
  const ended: MemfoldEvent[] = [];
  let done!: () => void;
  const jobEnded = new Promise<void>((resolve) => (done = resolve));
  const memfold = await createMemfold({
    env: { OPENAI_BASE_URL: fake.baseURL, MEMFOLD_EMBEDDING_MODEL: 'broken-embedder', MEMFOLD_MODEL_MAX_RETRIES: '2', MEMFOLD_JOB_RETRIES: '2' },
    config: { home: root },
    compaction: { contextWindow: 2_000, background: true },
    onEvent: (event) => {
      if (event.type !== 'compaction_job_ended') return;
      ended.push(event);
      done();
    },
  });
  try {
    const appended = await memfold.append('c', orderChat(30));
    await jobEnded;
    expect(ended).toEqual([expect.objectContaining({ status: 'failed', failureCode: 'archive_failed', attempt: 0, clientAttempts: 3 })]);
    expect(fake.requests.filter((r) => r.path.endsWith('/embeddings'))).toHaveLength(3);
    // Nothing lost: the failed compaction rolled back.
    expect((await memfold.persistence.loadHistory('c')).filter((m) => m.kind !== 'clip_archive')).toHaveLength(appended.length);
  } finally {
    await memfold.close();
    await rm(root, { recursive: true, force: true });
  }
});
