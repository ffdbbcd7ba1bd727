/**
 * memory_read's search answer on a real LanceDB archive: it shows the matching archived message with its
 * neighbours (not the head of its segment), stays within its token budget, lists summaries as pointers when
 * messages match, and names what it left out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { message, summary, tempFolder, transcript } from '../archive/archive-fixtures.js';

const tokens = (text: string) => Math.ceil(text.length / 4);
const FILLER = (i: number) => `Filler turn ${i}: we chatted about the weather, the traffic on the way home and what to cook tonight.`;

describe('memory_read search answers', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;
  let messages: ConversationMessage[];

  beforeAll(async () => {
    folder = await tempFolder('memory-read-search');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    messages = Array.from({ length: 120 }, (_, i) => message('conv', i + 1, FILLER(i + 1), i % 2 === 0 ? 'user' : 'assistant'));
    // The fact sits deep in the second segment, far past what a segment shown from its head would reach.
    messages[70] = message('conv', 71, 'Our new puppy is called Biscuit, a beagle we adopted from the shelter on Elm Street.');
    messages[72] = message('conv', 73, 'Biscuit already chewed through two of my slippers.', 'user');
    const segments = [0, 40, 80].map((from, k) => transcript('conv', `segment-${k}`, messages.slice(from, from + 40), { parentLabel: `batch-${k}` }));
    await archive.write([
      ...segments,
      summary('conv', 'batch-1', '[depth:0|start:x|end:y|count:40]\nThey talked about a puppy they adopted and the weather.', {
        sourceIds: segments[1]!.sourceIds,
      }),
    ]);
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('shows the matching message with its neighbours, not the summary of its segment', async () => {
    const { ok, output } = await createMemoryReadTool(archive, 'conv').execute({ query: 'What is the name of the puppy they adopted?' });
    expect(ok).toBe(true);
    const first = output.split(/\n\n(?=#2 )/)[0]!;
    expect(first).toMatch(/^#1 transcript \| segment-1 \| /m);
    expect(first).toContain('Our new puppy is called Biscuit');
    expect(first).toContain(FILLER(70));
    expect(first).toContain(FILLER(72));
    // The head of the segment is not what the answer shows first.
    expect(first).not.toContain(FILLER(41));
    expect(output).not.toContain('batch-1');
    expect(output).not.toContain('They talked about a puppy');
    expect(tokens(output)).toBeLessThanOrEqual(3_000);
  });

  it('with summaries as pointers, lists a matching summary as one line to read by label', async () => {
    const { output } = await createMemoryReadTool(archive, 'conv', { strategy: { summaries: 'pointer' } }).execute({ query: 'puppy adopted' });
    expect(output).toContain('Our new puppy is called Biscuit');
    expect(output).toMatch(/^- summary depth 0 \| batch-1 \| /m);
    expect(output).not.toContain('They talked about a puppy');
  });

  it('keeps the whole answer within max_tokens, and names what it left out with a way to read it', async () => {
    const tool = createMemoryReadTool(archive, 'conv');
    const wide = await tool.execute({ query: 'weather traffic cook', max_tokens: 12_000 });
    const narrow = await tool.execute({ query: 'weather traffic cook', max_tokens: 400 });
    expect(tokens(narrow.output)).toBeLessThanOrEqual(400);
    expect(tokens(wide.output)).toBeGreaterThan(tokens(narrow.output) * 3);
    expect(narrow.output).toMatch(/Left out for the token budget: \d+ more matching messages \(in segment-\d/);
    expect(narrow.output).toContain('{"label": "<label>"}');
    // The configured default applies when the call gives none.
    const small = await createMemoryReadTool(archive, 'conv', { maxTokens: 500 }).execute({ query: 'weather traffic cook' });
    expect(tokens(small.output)).toBeLessThanOrEqual(500);
    expect(tokens(small.output)).toBeGreaterThan(250);
  });

  it('refuses a configured budget outside its limits, naming it', () => {
    expect(() => createMemoryReadTool(archive, 'conv', { maxTokens: 50 })).toThrow(/Invalid argument maxTokens:/);
  });

  it('answers a summary-only search with the summaries’ text, and says when nothing matches', async () => {
    const tool = createMemoryReadTool(archive, 'conv');
    expect((await tool.execute({ query: 'puppy adopted', kind: 'summary' })).output).toContain('They talked about a puppy');
    // The hashing embedder ranks by full text alone: a word no message holds finds nothing.
    expect((await tool.execute({ query: 'zeppelin' })).output).toBe('No archived entry matches "zeppelin".');
  });

  it('when only vectors find entries, says no message shares the words and points to the nearest by meaning', async () => {
    const hybrid = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder(), fusionWeights: { fullText: 1, vector: 1 } });
    try {
      // Rows get vectors only when written with the vector ranking on: `archive` (full text alone) stored none.
      const rows = messages.map((m) => message('conv-vectors', m.seq, m.content, m.role));
      await hybrid.write([0, 40, 80].map((from, k) => transcript('conv-vectors', `segment-${k}`, rows.slice(from, from + 40))));
      const none = (await createMemoryReadTool(hybrid, 'conv-vectors').execute({ query: 'zeppelin' })).output;
      expect(none).toMatch(/^No archived message matches the words of "zeppelin"\. Nearest archived entries by meaning/);
      expect(none).toMatch(/^- transcript \| /m);
      expect(none).not.toContain('Filler turn');
    } finally {
      await hybrid.close();
    }
  });

  it('reads a transcript segment in full by its label', async () => {
    const { output } = await createMemoryReadTool(archive, 'conv').execute({ label: 'segment-1' });
    expect(output).toContain(FILLER(41));
    expect(output).toContain('Our new puppy is called Biscuit');
    expect(output).toContain(FILLER(80));
  });
});
