/**
 * memory_read and long messages: a reply of 900 tokens is scored and shown by its matching sentences (with a
 * neighbouring sentence, `…` where it is cut, and its label to read it whole), so one long message never takes the
 * answer's whole budget and the other matches still fit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { message, tempFolder, transcript } from '../archive/archive-fixtures.js';

const tokens = (text: string) => Math.ceil(text.length / 4);
const FILLER = (i: number) => `Filler turn ${i}: we chatted about the weather, the traffic on the way home and what to cook tonight.`;
/** About 900 tokens of advice, one sentence of which names the lighthouse. */
function longReply(topic: string, fact: string): string {
  const sentences = Array.from(
    { length: 40 },
    (_, i) => `Point ${i + 1} about ${topic}: keep a steady pace, drink water often, and check the forecast before you leave the house.`,
  );
  sentences.splice(20, 0, fact);
  return sentences.join(' ');
}

describe('memory_read shows long messages by their matching sentences', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;
  let messages: ConversationMessage[];
  const facts = [
    'The old lighthouse at Port Aven opens its stairs to visitors on Sundays only.',
    'Another lighthouse, at Cap Fréhel, has a cafe in its keeper house.',
    'The lighthouse on Batz island lends binoculars at the ticket desk.',
  ];

  beforeAll(async () => {
    folder = await tempFolder('memory-read-long');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    messages = Array.from({ length: 60 }, (_, i) => message('conv', i + 1, FILLER(i + 1), i % 2 === 0 ? 'user' : 'assistant'));
    [10, 30, 50].forEach((at, k) => {
      messages[at] = message('conv', at + 1, longReply(`hiking day ${k + 1}`, facts[k]!), 'assistant');
    });
    messages[44] = message('conv', 45, 'My sister Ana moved to Lisbon last spring.', 'user');
    await archive.write([0, 20, 40].map((from, k) => transcript('conv', `segment-${k}`, messages.slice(from, from + 20))));
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('a 900-token message never takes the whole answer: each matching sentence shows with its neighbour, within the budget', async () => {
    expect(tokens(messages[10]!.content)).toBeGreaterThan(850);
    const { output } = await createMemoryReadTool(archive, 'conv', { maxTokens: 1_000 }).execute({ query: 'Which lighthouse opens its stairs to visitors?' });
    expect(tokens(output)).toBeLessThanOrEqual(1_000);
    // All three long replies are reached, each by its matching sentence, not one of them whole.
    for (const fact of facts) expect(output).toContain(fact);
    expect(output).not.toContain('Point 1 about hiking day 1:');
    // The sentence after the match shows too, the cuts are marked, and the answer says how to read the whole message.
    expect(output).toContain(`${facts[0]} Point 21 about hiking day 1`);
    expect(output).toMatch(/assistant: … .*lighthouse at Port Aven/);
    expect(output).toContain("read its passage's label for the whole");
    expect(output).toMatch(/^#\d transcript \| segment-0 \| /m);
  });

  it('shows a short message whole with its neighbours, as before', async () => {
    const { output } = await createMemoryReadTool(archive, 'conv').execute({ query: 'Where did my sister Ana move?' });
    expect(output).toContain(`user: My sister Ana moved to Lisbon last spring.\n  [2024-05-01 10:46] assistant: ${FILLER(46)}`);
    expect(output).toContain(`assistant: ${FILLER(44)}\n`);
    expect(output).not.toContain('…');
  });

  it('reads the long message whole by its segment label', async () => {
    const { output } = await createMemoryReadTool(archive, 'conv').execute({ label: 'segment-0' });
    expect(output).toContain(messages[10]!.content.slice(0, 300));
  });
});
