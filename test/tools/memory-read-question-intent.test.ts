/**
 * memory_read shapes its answer by what the question asks: a question in the first person reaches the user's own
 * statements before the assistant's matching replies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { message, tempFolder, transcript } from '../archive/archive-fixtures.js';

const FILLER = (i: number) => `Filler turn ${i}: we chatted about the weather, the traffic on the way home and what to cook tonight.`;

describe('memory_read and what the question asks', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('memory-read-intent');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    const messages: ConversationMessage[] = Array.from({ length: 80 }, (_, i) => message('conv', i + 1, FILLER(i + 1), i % 2 === 0 ? 'user' : 'assistant'));
    // The assistant speaks of acoustic guitars often; the user said once which one they own.
    for (const at of [5, 15, 25, 35, 45, 55]) {
      messages[at] = message('conv', at + 1, `Acoustic guitar care: acoustic guitar strings fade within months (note ${at}).`, 'assistant');
    }
    messages[12] = message('conv', 13, 'I have had my acoustic guitar, a Yamaha FG800, for about eight years.', 'user');
    await archive.write([0, 20, 40, 60].map((from, k) => transcript('conv', `segment-${k}`, messages.slice(from, from + 20))));
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('a question in the first person shows the user’s own statement first', async () => {
    const query = 'Which acoustic guitar do I own?';
    const { output } = await createMemoryReadTool(archive, 'conv').execute({ query, max_tokens: 300 });
    const first = output.split(/\n\n(?=#2 )/)[0]!;
    expect(first).toContain('a Yamaha FG800, for about eight years');
  });
});
