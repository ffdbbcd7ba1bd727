/**
 * A `messagesOnly` search of the LanceDB archive: the same hits, in the same order and with the same scores and
 * messages as a full search, read without the entry's ids and sessions (fewer columns), on both rankings. The text
 * stays: a format-2 row's messages are rebuilt from their frames into it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive, SearchHit } from '../../src/archive/archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { message, summary, tempFolder, transcript } from './archive-fixtures.js';

const TOPICS = ['budget', 'travel', 'garden', 'kitchen', 'invoice'];

/** What a `messagesOnly` hit keeps: everything but the ids and the sessions (the text is compared on its own). */
const kept = (hits: SearchHit[]) => hits.map(({ entry: { content: _c, sourceIds: _s, operationId: _o, sessions: _x, ...rest }, score }) => ({ rest, score }));

describe('lancedb archive: messagesOnly search', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  const archives: Record<'fullText' | 'hybrid', Archive> = {} as never;

  beforeAll(async () => {
    folder = await tempFolder('messages-only');
    const embedder = createHashingEmbedder();
    archives.fullText = await openLanceArchive({ uri: folder.dir, embedder });
    const segments = Array.from({ length: 12 }, (_, k) =>
      transcript(
        'conv',
        `segment-${k}`,
        [1, 2, 3].map((j) => message('conv', k * 3 + j, `We talked about the ${TOPICS[(k + j) % TOPICS.length]} on day ${k}.`)),
        { parentLabel: `batch-${k}`, sessions: [`s-${k}`] },
      ),
    );
    await archives.fullText.write([...segments, summary('conv', 'batch-0', 'They talked about the budget and the garden.')]);
    archives.hybrid = await openLanceArchive({ uri: folder.dir, embedder, fusionWeights: { fullText: 1, vector: 0.5 } });
  });
  afterAll(async () => {
    await Promise.all(Object.values(archives).map((archive) => archive.close()));
    await folder.cleanup();
  });

  it.each(['fullText', 'hybrid'] as const)('returns the hits of a full search without their text (%s)', async (which) => {
    const archive = archives[which];
    const query = { conversationId: 'conv', kind: 'transcript' as const, query: 'budget garden day', limit: 8 };
    const full = await archive.search(query);
    const lean = await archive.search({ ...query, messagesOnly: true });
    expect(full.length).toBeGreaterThan(3);
    expect(kept(lean)).toEqual(kept(full));
    expect(lean.map((hit) => hit.entry.messages)).toEqual(full.map((hit) => hit.entry.messages));
    expect(lean.map((hit) => hit.entry.content)).toEqual(full.map((hit) => hit.entry.content));
    for (const { entry } of lean) {
      expect(entry.operationId).toBe('');
      expect(entry.sourceIds).toEqual([]);
      expect(entry.sessions).toBeUndefined();
    }
  });
});
