/**
 * memory_read's candidate searches read no more than the answer shows: the windows show messages, so transcript and
 * tool-output searches ask `messagesOnly` (the archive leaves the text out), and the answer is the one a full search gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { message, recording, summary, tempFolder, transcript } from '../archive/archive-fixtures.js';

/** The archive, its searches recorded; `full` drops `messagesOnly` and `textOnly`, so every search reads whole entries. */

// The last is in the summary alone: the answer shows its text.
const QUESTIONS = ['What did we decide about the garden fence?', 'How many times did we talk about the invoice?', 'budget', 'What was talked about?'];

describe('memory_read: columns its searches read', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('memory-read-columns');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    const topics = ['garden fence', 'invoice', 'budget', 'holiday'];
    const segments = Array.from({ length: 8 }, (_, k) =>
      transcript(
        'conv',
        `segment-${k}`,
        [1, 2, 3, 4].map((j) =>
          message('conv', k * 4 + j, `Day ${k}: we went over the ${topics[(k + j) % topics.length]} again.`, j % 2 ? 'user' : 'assistant'),
        ),
        { parentLabel: `batch-${k}` },
      ),
    );
    await archive.write([...segments, summary('conv', 'batch-0', 'They talked about the garden fence and the invoice.')]);
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it.each(QUESTIONS)('transcript searches read messages, summary searches text, and the answer is unchanged: %s', async (query) => {
    const lean = recording(archive);
    const whole = recording(archive, true);
    const answer = await createMemoryReadTool(lean.archive, 'conv').execute({ query });
    const fullAnswer = await createMemoryReadTool(whole.archive, 'conv').execute({ query });
    expect(answer.output).toMatch(query.includes('talked') ? /^#1 summary depth 0 \| batch-0 \| .*\n {2}They talked about/m : /transcript \| segment-/);
    expect(answer.output).toBe(fullAnswer.output);
    const segments = lean.searches.filter((s) => s.kind === 'transcript' || s.kind === 'tool_output');
    expect(segments.length).toBeGreaterThan(0);
    expect(segments.every((s) => s.messagesOnly === true)).toBe(true);
    // A summary is shown by its line and text.
    expect(lean.searches.filter((s) => s.kind === 'summary').every((s) => s.messagesOnly === undefined && s.textOnly === true)).toBe(true);
  });

  it('names the nearest entries in full when no message shares a word (their hits carry messages only)', async () => {
    // "assistant" is in the segments' lines (the role), never in a message's words.
    const lean = recording(archive);
    const whole = recording(archive, true);
    const answer = await createMemoryReadTool(lean.archive, 'conv').execute({ query: 'assistant' });
    const fullAnswer = await createMemoryReadTool(whole.archive, 'conv').execute({ query: 'assistant' });
    expect(answer.output).toMatch(/^No archived message matches the words of "assistant"/);
    expect(answer.output).toMatch(/^- transcript \| segment-\d \| 2\d{3}-\S+ \.\. 2\d{3}-\S+ \| 4 messages$/m);
    expect(answer.output).toBe(fullAnswer.output);
    expect(lean.searches.filter((s) => s.kind === 'transcript').every((s) => s.messagesOnly === true)).toBe(true);
  });

  it('the earlier display, which shows each segment from its text, reads whole entries', async () => {
    const lean = recording(archive);
    const { output } = await createMemoryReadTool(lean.archive, 'conv', { strategy: { display: 'segment-head' } }).execute({ query: 'garden fence' });
    expect(output).toContain('we went over the garden fence');
    expect(lean.searches.every((s) => s.messagesOnly === undefined)).toBe(true);
  });
});
