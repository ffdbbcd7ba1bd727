/**
 * A `messagesOnly` search of the LanceDB archive: the same hits, in the same order and with the same scores, labels,
 * kinds, parents and messages as a full search, read from five columns (the key, the text, the frames, format 1's
 * JSON, the parent), on both rankings; the rest of each entry is left empty. The text stays: a format-2 row's
 * messages are rebuilt from their frames into it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive, SearchHit } from '../../src/archive/archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { message, summary, tempFolder, transcript } from './archive-fixtures.js';

const TOPICS = ['budget', 'travel', 'garden', 'kitchen', 'invoice'];

/** What a `messagesOnly` hit keeps (the text is compared on its own). */
const kept = (hits: SearchHit[]) =>
  hits.map(({ entry: { label, kind, conversationId, parentLabel, messages }, score }) => ({ label, kind, conversationId, parentLabel, messages, score }));

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
      expect(entry).toMatchObject({ operationId: '', sourceIds: [], start: '', end: '', depth: 0, count: 0 });
      expect(entry.sessions).toBeUndefined();
    }
  });

  it('textOnly: the hits of a full search with their line and text, the rest left out', async () => {
    const query = { conversationId: 'conv', query: 'budget garden day', limit: 20 };
    const full = await archives.fullText.search(query);
    const lean = await archives.fullText.search({ ...query, textOnly: true });
    const line = (hits: SearchHit[]) =>
      hits.map(({ entry: { label, kind, conversationId, depth, start, end, count, content }, score }) => ({
        label,
        kind,
        conversationId,
        depth,
        start,
        end,
        count,
        content,
        score,
      }));
    expect(new Set(full.map((hit) => hit.entry.kind))).toEqual(new Set(['transcript', 'summary']));
    expect(line(lean)).toEqual(line(full));
    for (const { entry } of lean) {
      expect(entry).toMatchObject({ operationId: '', sourceIds: [] });
      expect([entry.parentLabel, entry.messages, entry.sessions]).toEqual([undefined, undefined, undefined]);
    }
    // Both: what either keeps.
    const both = await archives.fullText.search({ ...query, textOnly: true, messagesOnly: true });
    expect(line(both)).toEqual(line(full));
    expect(kept(both)).toEqual(kept(full));
  });

  it('reads the kind when the query names none', async () => {
    const query = { conversationId: 'conv', query: 'budget garden', limit: 20 };
    const full = await archives.fullText.search(query);
    const lean = await archives.fullText.search({ ...query, messagesOnly: true });
    expect(new Set(full.map((hit) => hit.entry.kind))).toEqual(new Set(['transcript', 'summary']));
    expect(kept(lean)).toEqual(kept(full));
  });
});
