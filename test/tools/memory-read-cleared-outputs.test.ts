/**
 * memory_read and the tool outputs cleared from the live history: an output no segment holds yet is searched and
 * shown; when the conversation has none (only superseded ones, or no output at all), it is counted and not searched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { ArchiveEntry } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { message, recording, tempFolder, transcript } from '../archive/archive-fixtures.js';

function output(conversationId: string, label: string, seq: number, content: string, parentLabel?: string): ArchiveEntry {
  const entry = transcript(conversationId, label, [{ ...message(conversationId, seq, content, 'tool'), toolCallId: `call-${seq}` }]);
  return { ...entry, kind: 'tool_output', ...(parentLabel ? { parentLabel } : {}) };
}

describe('memory_read: cleared tool outputs', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('memory-read-cleared');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    const chat = (id: string) =>
      transcript(id, 'segment-1', [message(id, 1, 'Please look up the warehouse stock.'), message(id, 2, 'Checking the stock now.', 'assistant')]);
    await archive.write([
      chat('open'),
      output('open', 'o-open', 3, 'warehouse stock: 1417 crates of quinces'),
      chat('folded'),
      output('folded', 'o-folded', 3, 'warehouse stock: 1417 crates of quinces', 'segment-1'),
      chat('plain'),
    ]);
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('shows an output no segment holds yet', async () => {
    const { archive: recorded, searches } = recording(archive);
    const { output: answer } = await createMemoryReadTool(recorded, 'open').execute({ query: 'how many crates of quinces' });
    expect(answer).toContain('1417 crates of quinces');
    expect(searches.some((s) => s.kind === 'tool_output')).toBe(true);
  });

  it.each(['folded', 'plain'])('searches no outputs when none is uncovered (%s)', async (conversationId) => {
    const { archive: recorded, searches } = recording(archive);
    const { output: answer } = await createMemoryReadTool(recorded, conversationId).execute({ query: 'warehouse stock' });
    expect(answer).toContain('Checking the stock now.');
    expect(answer).not.toContain('1417 crates');
    expect(searches.map((s) => s.kind)).toEqual(['transcript']);
  });
});
