/**
 * createMemfold with a semantic embedder: its memory_read ranks archived messages by meaning too, so a message that
 * shares no word with the question is found; with the lexical hashing embedder (its id `hashing-*`), words alone rank.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../src/embedding/embedder.js';
import { createMemfold } from '../src/memfold.js';
import { conceptEmbedder } from './support/concept-embedder.js';
import { dialogue } from './support/messages.js';

const EVIDENCE = 'We went to church on Sunday and sang hymns.';
const QUERY = 'Would Caroline be considered religious?';

async function answer(embedder: Embedder, home: string): Promise<string> {
  const memfold = await createMemfold({
    store: 'memory',
    embedder,
    env: { HOME: home },
    compaction: { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 },
  });
  try {
    const id = 'session';
    await memfold.append(id, dialogue(5));
    await memfold.append(id, [
      { role: 'user', content: EVIDENCE, createdAt: '2024-03-01T08:10:30.000Z' },
      { role: 'assistant', content: 'That sounds like a lovely morning.', createdAt: '2024-03-01T08:10:40.000Z' },
    ]);
    // Caroline named again, in words the question shares, far from the evidence.
    await memfold.append(id, [...dialogue(20, 5), { role: 'user', content: 'Caroline asked about topic-7 again.', createdAt: '2024-03-01T09:00:00.000Z' }]);
    await memfold.append(id, dialogue(10, 30));
    expect((await memfold.compact(id)).status).toBe('compacted');
    const result = await memfold.memoryRead(id).execute({ query: QUERY, max_tokens: 1000 });
    expect(result.ok).toBe(true);
    return result.output;
  } finally {
    await memfold.close();
  }
}

describe('createMemfold: memory_read with the configured embedder', () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'memfold-semantic-read-'));
  });
  afterAll(() => rm(home, { recursive: true, force: true }));

  it('a semantic embedder ranks archived messages by meaning; the hashing embedder does not', async () => {
    expect(await answer(conceptEmbedder(), home)).toContain(EVIDENCE);
    // The same vectors under a hashing id: taken as lexical, so memory_read ranks by words alone.
    const lexical = conceptEmbedder();
    expect(await answer({ ...lexical, id: 'hashing-test', embed: (texts) => lexical.embed(texts) }, home)).not.toContain(EVIDENCE);
  });
});
