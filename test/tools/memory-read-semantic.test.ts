/**
 * memory_read with a semantic embedder: candidate messages are ranked by meaning too, so evidence that shares no word
 * with the question is shown; without one, or with the lexical hashing embedder, words alone rank them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { semanticScores, vectorCache } from '../../src/tools/memory-read-semantic.js';
import { conceptEmbedder } from '../support/concept-embedder.js';
import { message, tempFolder, transcript } from '../archive/archive-fixtures.js';

const FILLER = (i: number) => `We talked about the weather and the traffic on the way home, turn ${i}.`;
/** Where Caroline is named: the question's one word the archive can find. */
const NAMED = [5, 25, 45];
const EVIDENCE = 'We sang hymns at the church on Sunday morning.';
const QUERY = 'Would Caroline be considered religious?';

describe('memory_read ranks by meaning with a semantic embedder', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('memory-read-semantic');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    const messages: ConversationMessage[] = Array.from({ length: 60 }, (_, i) => message('conv', i + 1, FILLER(i + 1)));
    for (const at of NAMED) messages[at] = message('conv', at + 1, `Caroline said hello and asked about the garden, turn ${at + 1}.`);
    messages[37] = message('conv', 38, EVIDENCE);
    await archive.write([0, 20, 40].map((from, k) => transcript('conv', `segment-${k}`, messages.slice(from, from + 20))));
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('shows a message that shares no word with the question when the embedder finds it close', async () => {
    const words = await createMemoryReadTool(archive, 'conv').execute({ query: QUERY, max_tokens: 1000 });
    expect(words.output).not.toContain(EVIDENCE);
    const embedder = conceptEmbedder();
    const meaning = await createMemoryReadTool(archive, 'conv', { embedder }).execute({ query: QUERY, max_tokens: 1000 });
    expect(meaning.ok).toBe(true);
    expect(meaning.output).toContain(EVIDENCE);
  });

  it('embeds each text once per tool', async () => {
    const embedder = conceptEmbedder();
    const tool = createMemoryReadTool(archive, 'conv', { embedder });
    await tool.execute({ query: QUERY, max_tokens: 1000 });
    const first = embedder.texts.length;
    await tool.execute({ query: QUERY, max_tokens: 1000 });
    expect(embedder.texts.length).toBe(first);
    expect(new Set(embedder.texts).size).toBe(first);
  });

  it('a semantic weight of 0 ranks by words alone, and the embedder is not called', async () => {
    const embedder = conceptEmbedder();
    const { output } = await createMemoryReadTool(archive, 'conv', { embedder, strategy: { semanticWeight: 0 } }).execute({ query: QUERY, max_tokens: 1000 });
    expect(output).not.toContain(EVIDENCE);
    expect(embedder.texts).toEqual([]);
  });

  it('a failing embedder leaves the answer to words, and is reported', async () => {
    const warnings: string[] = [];
    const tool = createMemoryReadTool(archive, 'conv', { embedder: conceptEmbedder({ fail: true }), onWarning: (text) => warnings.push(text) });
    const answer = await tool.execute({ query: QUERY, max_tokens: 1000 });
    const words = await createMemoryReadTool(archive, 'conv').execute({ query: QUERY, max_tokens: 1000 });
    expect(answer).toEqual(words);
    expect(warnings).toEqual([expect.stringContaining('concepts-test')]);
  });
});

describe('semanticScores', () => {
  it('spreads cosines from 0 at the mean to 1 for the closest', async () => {
    const scores = await semanticScores(conceptEmbedder(), 'religious', ['church', 'guitar', 'weather', 'church faith'], vectorCache());
    expect(scores[0]).toBe(1);
    expect(scores[3]).toBeGreaterThan(0.5);
    expect(scores[1]).toBe(0);
    expect(scores[2]).toBe(0);
  });

  it('is 0 everywhere when no text stands out', async () => {
    expect(await semanticScores(conceptEmbedder(), 'religious', ['weather', 'traffic'], vectorCache())).toEqual([0, 0]);
    expect(await semanticScores(conceptEmbedder(), 'religious', [], vectorCache())).toEqual([]);
  });

  it('scores with a full cache whose oldest texts this call reuses (the new ones evict them)', async () => {
    const cache = vectorCache(2);
    await semanticScores(conceptEmbedder(), 'religious', ['church'], cache);
    // The cache holds the question and "church"; "guitar" evicts the question's vector before it is read.
    expect(await semanticScores(conceptEmbedder(), 'religious', ['church', 'guitar'], cache)).toEqual([1, 0]);
  });
});
