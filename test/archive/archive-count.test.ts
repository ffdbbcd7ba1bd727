/**
 * `count`: how many entries `list` would return, on LanceDB (by its scalar indexes, no row read), scoped to one
 * conversation like every call. The in-memory archive has no `count` (its `list` costs nothing to speak of).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive, ListOptions } from '../../src/archive/archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { deferTableCreation } from '../../src/archive/lancedb/lancedb-deferred-archive.js';
import { openOnFirstUse } from '../../src/archive/on-first-use-archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { message, minute, summary, tempFolder, transcript } from './archive-fixtures.js';

const FILTERS: ListOptions[] = [
  { conversationId: 'conv' },
  { conversationId: 'conv', kind: 'tool_output' },
  { conversationId: 'conv', kind: 'tool_output', unmarkedOnly: true },
  { conversationId: 'conv', kind: 'summary', depth: 0 },
  { conversationId: 'conv', from: minute(3), to: minute(5) },
  { conversationId: 'other' },
  { conversationId: 'nobody' },
];

function output(label: string, seq: number, parentLabel?: string) {
  const entry = transcript('conv', label, [{ ...message('conv', seq, `tool result ${seq}`, 'tool'), toolCallId: `call-${seq}` }]);
  return { ...entry, kind: 'tool_output' as const, ...(parentLabel ? { parentLabel } : {}) };
}

describe('archive count', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  const archives: Record<string, Archive> = {};

  beforeAll(async () => {
    folder = await tempFolder('count');
    archives.lancedb = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    const entries = [
      transcript('conv', 'segment-1', [message('conv', 1, 'hello'), message('conv', 2, 'hi')]),
      output('o-1', 3, 'segment-1'),
      output('o-2', 4),
      output('o-3', 5),
      summary('conv', 'batch-1', 'They said hello.', { start: minute(1), end: minute(2) }),
      summary('other', 'batch-9', 'Elsewhere.'),
    ];
    for (const archive of Object.values(archives)) await archive.write(entries);
  });
  afterAll(async () => {
    await Promise.all(Object.values(archives).map((archive) => archive.close()));
    await folder.cleanup();
  });

  it.each(['lancedb'])('counts what list returns (%s)', async (which) => {
    const archive = archives[which]!;
    for (const filter of FILTERS) expect(await archive.count!(filter), JSON.stringify(filter)).toBe((await archive.list(filter)).length);
    expect(await archive.count!({ conversationId: 'conv', kind: 'tool_output', unmarkedOnly: true })).toBe(2);
  });

  it('is left out without the scalar indexes (a count would scan the table)', async () => {
    const unindexed = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder(), scalarIndexes: false });
    expect(unindexed.count).toBeUndefined();
    await unindexed.close();
  });

  it('is counted by listing through the archives that wrap one without a count (never 0 when some exist)', async () => {
    const unindexed = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder(), scalarIndexes: false });
    const wrappers = {
      onFirstUse: openOnFirstUse(async () => unindexed),
      deferred: deferTableCreation({
        embedder: createHashingEmbedder(),
        tableExists: async () => true,
        open: async () => unindexed,
        release: () => {},
      }),
    };
    for (const [name, wrapper] of Object.entries(wrappers)) {
      for (const filter of FILTERS) expect(await wrapper.count!(filter), `${name} ${JSON.stringify(filter)}`).toBe((await unindexed.list(filter)).length);
    }
    await unindexed.close();
  });
});
