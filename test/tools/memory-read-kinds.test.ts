/**
 * memory_read and the kinds of a category: a count of "musical instruments" finds the messages that name a guitar,
 * a drum set and a piano, though none of them says "instrument".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { message, tempFolder, transcript } from '../archive/archive-fixtures.js';

const FILLER = (i: number) => `Filler turn ${i}: we chatted about the weather, the traffic on the way home and what to cook tonight.`;
const OWNED = [
  'I have been playing my black Fender Stratocaster guitar a lot lately.',
  'I am thinking of selling my old drum set, a 5-piece Pearl Export.',
  'I need someone to service my Korg B1 piano before the recital.',
];

describe('memory_read searches the kinds of the category a question names', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('memory-read-kinds');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    const messages: ConversationMessage[] = Array.from({ length: 60 }, (_, i) => message('conv', i + 1, FILLER(i + 1), i % 2 === 0 ? 'user' : 'assistant'));
    [6, 26, 46].forEach((at, k) => {
      messages[at] = message('conv', at + 1, OWNED[k]!, 'user');
    });
    await archive.write([0, 20, 40].map((from, k) => transcript('conv', `segment-${k}`, messages.slice(from, from + 20))));
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('a count of musical instruments shows the guitar, the drum set and the piano', async () => {
    const tool = createMemoryReadTool(archive, 'conv', { strategy: { kindsOf: 'count' } });
    const { output } = await tool.execute({ query: 'How many musical instruments do I have?', max_tokens: 600 });
    for (const owned of OWNED) expect(output).toContain(owned);
  });

  it('a question that names no category is answered by its own words alone', async () => {
    const tool = createMemoryReadTool(archive, 'conv', { strategy: { kindsOf: 'category' } });
    const { output } = await tool.execute({ query: 'When did we talk about the recital?', max_tokens: 600 });
    expect(output).toContain(OWNED[2]);
    expect(output).not.toContain(OWNED[0]);
  });

  it('without the kinds, the question shares no word with those messages', async () => {
    const tool = createMemoryReadTool(archive, 'conv', { strategy: { kindsOf: 'none' } });
    const { output } = await tool.execute({ query: 'How many musical instruments do I have?', max_tokens: 600 });
    for (const owned of OWNED) expect(output).not.toContain(owned);
  });
});
