/**
 * An embedding endpoint that is down (stopped, or answering 500) must not take memfold down: opening,
 * appends and reads work, archive writes fail cleanly (compaction fails `archive_failed`, nothing lost),
 * and search answers from full text, saying why (a warning event, and a line in memory_read's answer).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/conversation/types.js';
import { createMemfold, type MemfoldEvent } from '../../src/memfold.js';
import { persistenceBackends, type OpenedBackend } from '../support/backends.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { orderChat } from '../support/messages.js';

const [backend] = persistenceBackends();
let fake: FakeOpenAI;
let store: OpenedBackend;
let lancedbUri: string;

beforeEach(async () => {
  fake = await startFakeOpenAI({ dimensions: 16 });
  store = await backend!.open();
  lancedbUri = await mkdtemp(path.join(os.tmpdir(), 'memfold-embed-down-'));
});
afterEach(async () => {
  await fake.close();
  await store.cleanup();
  await rm(lancedbUri, { recursive: true, force: true });
});

function open(events: MemfoldEvent[] = []) {
  return createMemfold({
    persistence: store.persistence,
    config: { lancedbUri },
    compaction: { contextWindow: 2_000 },
    env: { OPENAI_BASE_URL: fake.baseURL, MEMFOLD_EMBEDDING_MODEL: 'fake-embedder', MEMFOLD_MODEL_MAX_RETRIES: '0' },
    onEvent: (event) => events.push(event),
  });
}

/** Make the endpoint fail the way the case says. */
async function breakEndpoint(how: 'stopped' | 'http 500'): Promise<void> {
  if (how === 'http 500') fake.setBehavior(behaviors.status(500));
  else await fake.close(); // connections are refused from now on (closing twice is harmless)
}

const REASON = { stopped: 'connection error', 'http 500': 'http 500' } as const;

describe.each(['stopped', 'http 500'] as const)('embedding endpoint %s', (how) => {
  it('with an archive already written: opening, appends, reads and search work; compaction fails cleanly', async () => {
    const first = await open();
    await first.append('orders', orderChat(20));
    expect((await first.compact('orders')).status).toBe('compacted');
    await first.close();

    await breakEndpoint(how);
    const events: MemfoldEvent[] = [];
    const memfold = await open(events);
    try {
      await memfold.append('orders', orderChat(10, 20));
      const before = await memfold.context('orders');
      expect(before.at(-1)!.content).toContain('ORD-529');

      const answer = await memfold.memoryRead('orders').execute({ query: 'ORD-503' });
      expect(answer.ok).toBe(true);
      expect(answer.output).toContain('ORD-503'); // full text still finds it
      const notes = answer.output.split('\n').filter((line) => /vector search/i.test(line));
      expect(notes).toEqual([`Note: vector search was unavailable (openai:fake-embedder: ${REASON[how]}), so these results come from full-text search only.`]);
      expect(events).toContainEqual(
        expect.objectContaining({ type: 'warning', code: 'vector_search_unavailable', message: expect.stringContaining(REASON[how]) }),
      );

      const result = await memfold.compact('orders', { force: true });
      expect(result.status).toBe('failed');
      expect(result.failureCode).toBe('archive_failed');
      expect(result.error).toContain(REASON[how]);
      expect(await memfold.context('orders')).toEqual(before);
    } finally {
      await memfold.close();
    }
  });

  it('with no archive yet: opening, appends and reads work; search finds the live messages alone; compaction fails cleanly', async () => {
    await breakEndpoint(how);
    const memfold = await open();
    try {
      await memfold.append('orders', orderChat(20));
      const before = await memfold.context('orders');
      expect(before).toHaveLength(40);
      const answer = await memfold.memoryRead('orders').execute({ query: 'ORD-503' });
      expect(answer.ok).toBe(true);
      // Nothing archived: the answer holds the live history's matches alone.
      expect(answer.output).toMatch(/^#1 transcript \| live history \| /m);
      expect(answer.output).not.toMatch(/^#\d+ transcript \| (?!live history)/m);

      const result = await memfold.compact('orders');
      expect(result.status).toBe('failed');
      expect(result.failureCode).toBe('archive_failed');
      expect(await memfold.context('orders')).toEqual(before);
    } finally {
      await memfold.close();
    }
  });
});

describe('embedding endpoint back up', () => {
  it('the first write of a new archive learns the vector size and creates the table; search then uses vectors', async () => {
    const events: MemfoldEvent[] = [];
    const memfold = await open(events);
    try {
      await memfold.append('orders', orderChat(20));
      expect((await memfold.compact('orders')).status).toBe('compacted');
      const hits = await memfold.archive.search({ conversationId: 'orders', query: 'ORD-503' });
      expect(hits.some((hit) => hit.entry.content.includes('ORD-503'))).toBe(true);
      expect(events.filter((event) => event.type === 'warning')).toEqual([]);
    } finally {
      await memfold.close();
    }
  });
});

describe('an embedding model whose vectors change size under the same name', () => {
  it('is caught against the table: search falls back to full text saying why, compaction fails cleanly', async () => {
    const first = await open();
    await first.append('orders', orderChat(20));
    expect((await first.compact('orders')).status).toBe('compacted');
    await first.close();

    fake.setDimensions(8); // the table holds 16-dimensional vectors
    const memfold = await open();
    try {
      await memfold.append('orders', orderChat(10, 20));
      const before = await memfold.context('orders');
      const answer = await memfold.memoryRead('orders').execute({ query: 'ORD-503' });
      expect(answer.ok).toBe(true);
      expect(answer.output).toContain('ORD-503');
      expect(answer.output).toContain('Note: vector search was unavailable (openai:fake-embedder: dimension mismatch)');
      const result = await memfold.compact('orders', { force: true });
      expect(result.failureCode).toBe('archive_failed');
      expect(result.error).toMatch(/returned 8-dimensional vectors, but LanceDB table "memfold_archive" holds 16-dimensional ones/);
      expect(await memfold.context('orders')).toEqual(before);
    } finally {
      await memfold.close();
    }
  });
});
