/**
 * memory_read and a question naming a date: segments of that time are searched beside the plain candidates only when
 * the plain search came back full. When it returned fewer than asked it returned every match, those of the date among
 * them, so a dated search would add nothing: it is not made, and the answer is the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { message, recording, tempFolder, transcript } from '../archive/archive-fixtures.js';

const QUESTION = 'Where did we kayak on 8 May 2023?';
const DATED = 'On the lake we rented a kayak, the one with the yellow paddles.';

/** Segment `k` of a conversation: one message on day `day` of June 2023, or on 8 May 2023 for the dated one. */
function segment(conversationId: string, k: number, content: string, at: string) {
  const said: ConversationMessage = { ...message(conversationId, k + 1, content), createdAt: at };
  return transcript(conversationId, `segment-${k}`, [said]);
}

const june = (k: number) => new Date(Date.UTC(2023, 5, 1 + (k % 28), 9, k)).toISOString();

describe('memory_read: the dated search', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('memory-read-dated');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    // `few`: three matching segments, the plain search returns them all. `many`: thirty that say "kayak" more often
    // than the dated one, which the plain search's 20 therefore leave out.
    const few = [0, 1].map((k) => segment('few', k, 'We took the kayak out again.', june(k)));
    const many = Array.from({ length: 30 }, (_, k) => segment('many', k, `Kayak day ${k}: kayak, kayak and more kayak.`, june(k)));
    await archive.write([
      ...few,
      segment('few', 2, DATED, '2023-05-08T09:00:00.000Z'),
      ...many,
      segment('many', 30, `${DATED} ${'Then we walked along the shore for a long while and talked. '.repeat(4)}`, '2023-05-08T09:00:00.000Z'),
    ]);
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('is not made when the plain search returned every match; the dated message is shown all the same', async () => {
    const { archive: recorded, searches } = recording(archive);
    const { output } = await createMemoryReadTool(recorded, 'few').execute({ query: QUESTION, limit: 3 });
    expect(output).toContain('yellow paddles');
    const plain = searches.filter((s) => s.kind === 'transcript' && s.from === undefined);
    expect(plain.length).toBeGreaterThan(0);
    expect(searches.filter((s) => s.from !== undefined)).toEqual([]);
    // Asking for exactly the three there are, the plain search comes back full and the dated one is made: same answer.
    const dated = recording(archive);
    const withDated = await createMemoryReadTool(dated.archive, 'few', { strategy: { candidateSegments: 3 } }).execute({ query: QUESTION, limit: 3 });
    expect(dated.searches.some((s) => s.from !== undefined)).toBe(true);
    expect(withDated.output).toBe(output);
  });

  it('is made when the plain search came back full, and finds the segment of the date beyond it', async () => {
    const plainHits = await archive.search({ conversationId: 'many', kind: 'transcript', query: 'kayak 8 may 2023', limit: 20 });
    expect(plainHits).toHaveLength(20);
    expect(plainHits.map((hit) => hit.entry.label)).not.toContain('segment-30');
    const { archive: recorded, searches } = recording(archive);
    const { output } = await createMemoryReadTool(recorded, 'many').execute({ query: QUESTION });
    expect(searches.some((s) => s.from !== undefined && s.kind === 'transcript')).toBe(true);
    expect(output).toContain('yellow paddles');
  });
});
