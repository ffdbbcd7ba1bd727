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

// The assistant names a kind often; the user said once which one they own.
const OWNED_BY_USER = 'My cello is a 1920s German one that I inherited from my aunt.';
const ASSISTANT_KINDS = (i: number) => `Cello players tune the cello before every practice (note ${i}).`;

describe('memory_read searches the kinds of the category a question names', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;
  let kindsArchive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('memory-read-kinds');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    const messages: ConversationMessage[] = Array.from({ length: 60 }, (_, i) => message('conv', i + 1, FILLER(i + 1), i % 2 === 0 ? 'user' : 'assistant'));
    [6, 26, 46].forEach((at, k) => {
      messages[at] = message('conv', at + 1, OWNED[k]!, 'user');
    });
    await archive.write([0, 20, 40].map((from, k) => transcript('conv', `segment-${k}`, messages.slice(from, from + 20))));
    kindsArchive = await openLanceArchive({ uri: `${folder.dir}/second`, embedder: createHashingEmbedder() });
    const talk: ConversationMessage[] = Array.from({ length: 60 }, (_, i) => message('conv', i + 1, FILLER(i + 1), i % 2 === 0 ? 'user' : 'assistant'));
    for (const at of [5, 15, 25, 35, 45, 55]) talk[at] = message('conv', at + 1, ASSISTANT_KINDS(at), 'assistant');
    talk[40] = message('conv', 41, OWNED_BY_USER, 'user');
    await kindsArchive.write([0, 20, 40].map((from, k) => transcript('conv', `segment-${k}`, talk.slice(from, from + 20))));
  });
  afterAll(async () => {
    await kindsArchive.close();
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

  it('a question in the first person shows the user’s own message naming a kind before the assistant’s', async () => {
    const tool = createMemoryReadTool(kindsArchive, 'conv');
    const { output } = await tool.execute({ query: 'How many musical instruments do I own?', max_tokens: 300 });
    const first = output.split(/\n\n(?=#2 )/)[0]!;
    expect(first).toContain(OWNED_BY_USER);
    const without = await createMemoryReadTool(kindsArchive, 'conv', { strategy: { selfKinds: false } }).execute({
      query: 'How many musical instruments do I own?',
      max_tokens: 300,
    });
    expect(without.output.split(/\n\n(?=#2 )/)[0]).not.toContain(OWNED_BY_USER);
  });

  it('without the kinds, the question shares no word with those messages', async () => {
    const tool = createMemoryReadTool(archive, 'conv', { strategy: { kindsOf: 'none' } });
    const { output } = await tool.execute({ query: 'How many musical instruments do I have?', max_tokens: 600 });
    for (const owned of OWNED) expect(output).not.toContain(owned);
  });
});
