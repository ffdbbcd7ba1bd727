/**
 * The Archive contract, run on every archive backend (test/support/archives.ts): upsert by label
 * within one operation, read order, list order and filters, marks, deletes, search basics, namespaces,
 * close. LanceDB-only behaviour (vector sizes, indexes, ranking details) has its own suites.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { MemfoldError } from '../../src/errors.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { archiveBackends, type ArchiveTable } from '../support/archives.js';
import { message, minute, summary, tempFolder, transcript } from './archive-fixtures.js';

const embedder = createHashingEmbedder();
const labelsOf = (entries: { label: string }[]) => entries.map((entry) => entry.label);

for (const backend of archiveBackends()) {
  describe(`${backend.name} archive: rows, filters, marks`, () => {
    let table: ArchiveTable;
    let archive: Archive;

    beforeAll(async () => {
      table = await backend.table();
      archive = await table.open();
    });
    afterAll(async () => {
      await archive.close();
      await table.cleanup();
    });

    it('upserts by label within one operation: writing a label twice leaves one row with the latest values', async () => {
      await archive.write([summary('up', 'b1', 'first version mentions walrus')]);
      await archive.write([summary('up', 'b1', 'second version mentions narwhal', { count: 7 })]);
      const rows = await archive.list({ conversationId: 'up' });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ label: 'b1', content: 'second version mentions narwhal', count: 7, operationId: 'op-1' });
      // The first text is gone from the search as well.
      expect(await archive.search({ conversationId: 'up', query: 'walrus' })).toEqual([]);
      expect(labelsOf((await archive.search({ conversationId: 'up', query: 'narwhal' })).map((hit) => hit.entry))).toEqual(['b1']);
    });

    it("never replaces another operation's row: the write is refused naming the label, the row stays, the rest of the write lands", async () => {
      await archive.write([summary('own', 'held', 'archived by the first operation')]);
      const write = archive.write([
        summary('own', 'held', 'a later operation reusing the label', { operationId: 'op-2' }),
        summary('own', 'fresh', 'a new label of the later operation', { operationId: 'op-2' }),
      ]);
      await expect(write).rejects.toMatchObject({ code: 'archive_error', message: expect.stringContaining('held (operation op-1)') });
      const [held, fresh] = await archive.read('own', ['held', 'fresh']);
      expect(held).toMatchObject({ content: 'archived by the first operation', operationId: 'op-1' });
      expect(fresh).toMatchObject({ operationId: 'op-2' });
    });

    it('keeps the last entry when one write repeats a label', async () => {
      await archive.write([summary('dup', 'x', 'old'), summary('dup', 'y', 'other'), summary('dup', 'x', 'new')]);
      const rows = await archive.read('dup', ['x', 'y']);
      expect(rows.map((row) => row.content)).toEqual(['new', 'other']);
    });

    it('keeps the same label apart in two conversations', async () => {
      await archive.write([summary('conv-a', 'shared-label', 'text of a'), summary('conv-b', 'shared-label', 'text of b')]);
      expect((await archive.read('conv-a', ['shared-label']))[0]?.content).toBe('text of a');
      expect((await archive.read('conv-b', ['shared-label']))[0]?.content).toBe('text of b');
    });

    it('reads in the order asked, leaving missing labels out, and round-trips every field', async () => {
      const messages = [
        message('rt', 1, 'hello there'),
        {
          ...message('rt', 2, 'hi, calling a tool', 'assistant'),
          toolCalls: [{ id: 'call-1', type: 'function' as const, function: { name: 'ls', arguments: '{}' } }],
        },
      ];
      const segment = transcript('rt', 't1', messages, { parentLabel: 's1' });
      const batch = summary('rt', 's1', '[depth:0|start:x|end:y|count:2] greeting', { sourceIds: ['rt-m1', 'rt-m2'], start: minute(1), end: minute(2) });
      await archive.write([segment, batch]);
      const [s1, t1] = await archive.read('rt', ['s1', 'missing', 't1']);
      expect(s1).toEqual(batch);
      expect(s1).not.toHaveProperty('parentLabel');
      expect(s1).not.toHaveProperty('messages');
      expect(t1).toEqual(segment);
      expect(t1?.messages?.[1]?.toolCalls?.[0]?.function.name).toBe('ls');
      expect(await archive.read('rt', [])).toEqual([]);
      expect(await archive.read('other-conversation', ['s1'])).toEqual([]);
    });

    it('round-trips the sessions an entry covers, and leaves them out of an entry that has none', async () => {
      const segment = transcript('sess', 't1', [{ ...message('sess', 1, 'hello'), sessionId: 'monday' }], { sessions: ['monday'] });
      const batch = summary('sess', 's1', 'greeting', { sessions: ['monday', 'tuesday, "late"'] });
      const bare = summary('sess', 's2', 'no sessions');
      await archive.write([segment, batch, bare]);
      const [t1, s1, s2] = await archive.read('sess', ['t1', 's1', 's2']);
      expect(t1).toEqual(segment);
      expect(s1).toEqual(batch);
      expect(s2).toEqual(bare);
      expect(s2).not.toHaveProperty('sessions');
      expect((await archive.list({ conversationId: 'sess', kind: 'summary' })).map((e) => e.sessions)).toEqual([['monday', 'tuesday, "late"'], undefined]);
    });

    it('keeps cleared tool outputs as their own kind: written, read, filtered, searched, marked; refuses an unknown kind', async () => {
      const output = { ...message('to', 4, 'SKU-77 stock 12 in aisle 3', 'tool'), toolCallId: 'call_4' };
      await archive.write([transcript('to', 't-1', [message('to', 1, 'verbatim words')]), transcript('to', 'o-1', [output], { kind: 'tool_output' })]);
      expect(await archive.read('to', ['o-1'])).toMatchObject([{ kind: 'tool_output', messages: [output] }]);
      expect(labelsOf(await archive.list({ conversationId: 'to', kind: 'tool_output' }))).toEqual(['o-1']);
      expect(labelsOf(await archive.list({ conversationId: 'to', kind: 'transcript' }))).toEqual(['t-1']);
      expect(labelsOf((await archive.search({ conversationId: 'to', query: 'aisle', kind: 'tool_output' })).map((hit) => hit.entry))).toEqual(['o-1']);
      await archive.mark('to', ['o-1'], 't-1');
      expect(await archive.list({ conversationId: 'to', kind: 'tool_output', unmarkedOnly: true })).toEqual([]);
      await expect(archive.list({ conversationId: 'to', kind: 'memo' as never })).rejects.toMatchObject({ field: 'kind' });
      await expect(archive.write([transcript('to', 'x', [], { kind: 'memo' as never })])).rejects.toMatchObject({ field: 'entries[0].kind' });
    });

    describe('list', () => {
      beforeAll(async () => {
        // Written out of order on purpose.
        await archive.write([
          summary('ls', 'd0-late', 'late batch', { start: minute(20), end: minute(29) }),
          summary('ls', 'd1', 'depth one', { depth: 1, start: minute(0), end: minute(19), count: 2 }),
          summary('ls', 'd0-b', 'second batch, same start, later end', { start: minute(0), end: minute(12) }),
          summary('ls', 'd0-a2', 'same span as d0-a, label breaks the tie', { start: minute(0), end: minute(9) }),
          summary('ls', 'd0-a', 'first batch', { start: minute(0), end: minute(9) }),
          transcript('ls', 'tr', [message('ls', 3, 'verbatim words')]),
        ]);
      });

      it('returns the conversation in time order: start, then end, then label', async () => {
        expect(labelsOf(await archive.list({ conversationId: 'ls' }))).toEqual(['d0-a', 'd0-a2', 'd0-b', 'd1', 'tr', 'd0-late']);
      });

      it('filters by depth and kind', async () => {
        expect(labelsOf(await archive.list({ conversationId: 'ls', depth: 1 }))).toEqual(['d1']);
        expect(labelsOf(await archive.list({ conversationId: 'ls', kind: 'transcript' }))).toEqual(['tr']);
        expect(labelsOf(await archive.list({ conversationId: 'ls', kind: 'summary', depth: 0 }))).toEqual(['d0-a', 'd0-a2', 'd0-b', 'd0-late']);
      });

      it('selects entries whose span overlaps [from, to]', async () => {
        expect(labelsOf(await archive.list({ conversationId: 'ls', from: minute(10), to: minute(15) }))).toEqual(['d0-b', 'd1']);
        expect(labelsOf(await archive.list({ conversationId: 'ls', from: minute(25) }))).toEqual(['d0-late']);
        expect(labelsOf(await archive.list({ conversationId: 'ls', to: minute(0), kind: 'summary' }))).toEqual(['d0-a', 'd0-a2', 'd0-b', 'd1']);
        // Bounds are inclusive: an entry ending exactly at `from` overlaps.
        expect(labelsOf(await archive.list({ conversationId: 'ls', from: minute(29) }))).toEqual(['d0-late']);
      });

      it('marks and unmarks: unmarkedOnly gives the frontier', async () => {
        await archive.mark('ls', ['d0-a', 'd0-a2', 'missing-label'], 'd1');
        expect(labelsOf(await archive.list({ conversationId: 'ls', unmarkedOnly: true, kind: 'summary' }))).toEqual(['d0-b', 'd1', 'd0-late']);
        expect((await archive.read('ls', ['d0-a']))[0]?.parentLabel).toBe('d1');
        await archive.mark('ls', ['d0-a2'], null);
        expect(labelsOf(await archive.list({ conversationId: 'ls', unmarkedOnly: true, depth: 0, kind: 'summary' }))).toEqual(['d0-a2', 'd0-b', 'd0-late']);
        expect((await archive.read('ls', ['d0-a2']))[0]).not.toHaveProperty('parentLabel');
        // Marked entries stay searchable.
        expect(labelsOf((await archive.search({ conversationId: 'ls', query: 'first batch' })).map((hit) => hit.entry))).toContain('d0-a');
      });

      it('marks each label under its own parent in one call, clears with null, and names a bad mark', async () => {
        await archive.write([summary('other-mark', 'd0-a', 'another conversation, same label')]);
        await archive.markEach('ls', [
          { label: 'd0-a', parentLabel: "it's d1" },
          { label: 'tr', parentLabel: 'd0-b' },
          { label: 'missing-label', parentLabel: 'd1' },
          { label: 'd0-b', parentLabel: 'd1' },
        ]);
        const parents = async (conversationId: string, labels: string[]) => (await archive.read(conversationId, labels)).map((e) => [e.label, e.parentLabel]);
        expect(await parents('ls', ['d0-a', 'tr', 'd0-b', 'd0-a2'])).toEqual([
          ['d0-a', "it's d1"],
          ['tr', 'd0-b'],
          ['d0-b', 'd1'],
          ['d0-a2', undefined],
        ]);
        expect(await parents('other-mark', ['d0-a'])).toEqual([['d0-a', undefined]]);
        // Only the parent changed: content, transcript messages and search are as they were.
        expect((await archive.read('ls', ['d0-a']))[0]?.content).toBe('first batch');
        expect((await archive.read('ls', ['tr']))[0]?.messages?.[0]?.content).toBe('verbatim words');
        expect(labelsOf((await archive.search({ conversationId: 'ls', query: 'first batch' })).map((hit) => hit.entry))).toContain('d0-a');
        // The last mark of a label wins; null clears.
        await archive.markEach('ls', [
          { label: 'd0-b', parentLabel: 'd1' },
          { label: 'tr', parentLabel: null },
          { label: 'd0-b', parentLabel: null },
        ]);
        expect(await parents('ls', ['tr', 'd0-b', 'd0-a'])).toEqual([
          ['tr', undefined],
          ['d0-b', undefined],
          ['d0-a', "it's d1"],
        ]);
        // Many parents in one call (the LanceDB adapter merges them instead of updating parent by parent): the same.
        await archive.markEach('ls', [
          { label: 'd0-a', parentLabel: 'p1' },
          { label: 'tr', parentLabel: 'p2' },
          { label: 'd0-b', parentLabel: 'p3' },
          { label: 'd0-a2', parentLabel: 'p4' },
          { label: 'missing-label', parentLabel: 'p5' },
          { label: 'd0-b', parentLabel: null },
        ]);
        expect(await parents('ls', ['d0-a', 'tr', 'd0-b', 'd0-a2'])).toEqual([
          ['d0-a', 'p1'],
          ['tr', 'p2'],
          ['d0-b', undefined],
          ['d0-a2', 'p4'],
        ]);
        expect(await parents('other-mark', ['d0-a'])).toEqual([['d0-a', undefined]]);
        await expect(archive.markEach('ls', [{ label: 'tr', parentLabel: '' }])).rejects.toThrow(/marks\[0\]\.parentLabel/);
        await expect(archive.markEach('ls', [{ label: 7 as unknown as string, parentLabel: 'd1' }])).rejects.toThrow(/marks\[0\]\.label/);
      });

      it('deletes only the named labels of that conversation', async () => {
        await archive.write([summary('other-ls', 'd0-late', 'must survive')]);
        await archive.delete('ls', ['d0-late', 'tr', 'not-there']);
        expect(labelsOf(await archive.list({ conversationId: 'ls' }))).toEqual(['d0-a', 'd0-a2', 'd0-b', 'd1']);
        expect(labelsOf(await archive.list({ conversationId: 'other-ls' }))).toEqual(['d0-late']);
      });
    });

    it('rejects bad input with errors that name the field', async () => {
      await expect(archive.write([summary('bad', 'l', 'x', { start: 'yesterday' })])).rejects.toMatchObject({
        code: 'invalid_argument',
        field: 'entries[0].start',
      });
      await expect(archive.write([summary('bad', '', 'x')])).rejects.toMatchObject({ field: 'entries[0].label' });
      await expect(archive.write([summary('bad', 'l', 'x'), summary('bad', 'm', 'x', { sessions: ['ok', ''] })])).rejects.toMatchObject({
        field: 'entries[1].sessions',
      });
      await expect(archive.list({ conversationId: '' })).rejects.toMatchObject({ field: 'conversationId' });
      await expect(archive.list({ conversationId: 'c', depth: 1.5 })).rejects.toMatchObject({ field: 'depth' });
      await expect(archive.list({ conversationId: 'c', from: 'not a time' })).rejects.toMatchObject({ field: 'from' });
      await expect(archive.search({ conversationId: 'c', query: 'x', limit: 0 })).rejects.toMatchObject({ field: 'limit' });
      await expect(archive.list({ conversationId: 'bad' })).resolves.toEqual([]);
    });

    it('searches full text within the conversation and filters: best first, at most `limit`, query syntax is plain text', async () => {
      await archive.write([
        summary('sr', 'walrus', 'the walrus named Quillon ate forty clams', { start: minute(1), end: minute(1) }),
        summary('sr', 'plain', 'a quiet day without any animals', { start: minute(2), end: minute(2) }),
        summary('sr', 'deep', 'Quillon again, summarized one level up', { depth: 1, start: minute(1), end: minute(2) }),
        transcript('sr', 'words', [message('sr', 3, 'Quillon said "hello" (twice)')]),
        summary('sr-other', 'walrus', 'Quillon lives in another conversation'),
      ]);
      const hits = await archive.search({ conversationId: 'sr', query: 'Quillon clams' });
      expect(hits[0]?.entry.label).toBe('walrus');
      expect(hits.every((hit) => hit.entry.conversationId === 'sr')).toBe(true);
      expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
      expect(labelsOf((await archive.search({ conversationId: 'sr', query: 'Quillon', depth: 1 })).map((hit) => hit.entry))).toEqual(['deep']);
      expect(labelsOf((await archive.search({ conversationId: 'sr', query: 'Quillon', kind: 'transcript' })).map((hit) => hit.entry))).toEqual(['words']);
      expect(labelsOf((await archive.search({ conversationId: 'sr', query: 'Quillon', from: minute(3) })).map((hit) => hit.entry))).toEqual(['words']);
      expect(await archive.search({ conversationId: 'sr', query: 'Quillon', limit: 1 })).toHaveLength(1);
      for (const query of ['"Quillon', 'Quillon AND (', "' OR '1'='1", 'label:*', '\\']) {
        const found = await archive.search({ conversationId: 'sr', query });
        expect(
          found.every((hit) => hit.entry.conversationId === 'sr'),
          query,
        ).toBe(true);
      }
    });

    it('serializes concurrent writers on one table: every row lands', async () => {
      const second = await table.open();
      try {
        await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            (i % 2 === 0 ? archive : second).write([summary('conc', `l${i}`, `concurrent ${i}`, { start: minute(i), end: minute(i) })]),
          ),
        );
        await Promise.all([archive.mark('conc', ['l0', 'l1'], 'p'), second.mark('conc', ['l2'], 'p'), second.delete('conc', ['l15'])]);
        const rows = await archive.list({ conversationId: 'conc' });
        expect(rows).toHaveLength(15);
        expect(rows.filter((row) => row.parentLabel === 'p').map((row) => row.label)).toEqual(['l0', 'l1', 'l2']);
      } finally {
        await second.close();
      }
    });
  });

  describe(`${backend.name} archive: namespaces, reopening, close`, () => {
    let table: ArchiveTable;
    beforeAll(async () => {
      table = await backend.table();
    });
    afterAll(async () => table.cleanup());

    it('keeps namespaces apart in one table', async () => {
      const a = await table.open({ namespace: 'tenant-a' });
      const b = await table.open({ namespace: 'tenant-b' });
      await a.write([summary('c', 'l', 'from tenant a about tapirs')]);
      await b.write([summary('c', 'l', 'from tenant b about tapirs')]);
      expect((await a.read('c', ['l']))[0]?.content).toBe('from tenant a about tapirs');
      expect((await b.list({ conversationId: 'c' })).map((entry) => entry.content)).toEqual(['from tenant b about tapirs']);
      expect((await a.search({ conversationId: 'c', query: 'tapirs' })).map((hit) => hit.entry.content)).toEqual(['from tenant a about tapirs']);
      await a.close();
      await b.close();
    });

    it('keeps everything across close and reopen on the same table; a closed archive refuses every call, and closing twice is fine', async () => {
      const first = await table.open();
      await first.write([summary('keep', 's', 'persisted okapi notes', { parentLabel: 'up' }), transcript('keep', 't', [message('keep', 1, 'okapi')])]);
      await first.close();
      await first.close();
      await expect(first.list({ conversationId: 'keep' })).rejects.toMatchObject({ code: 'archive_error' });
      await expect(first.write([summary('keep', 'late', 'after close')])).rejects.toMatchObject({ code: 'archive_error' });
      await expect(first.search({ conversationId: 'keep', query: 'okapi' })).rejects.toMatchObject({ code: 'archive_error' });
      const again = await table.open();
      expect(labelsOf(await again.list({ conversationId: 'keep' }))).toEqual(['s', 't']);
      expect((await again.read('keep', ['s']))[0]?.parentLabel).toBe('up');
      expect(labelsOf((await again.search({ conversationId: 'keep', query: 'okapi notes' })).map((hit) => hit.entry))[0]).toBe('s');
      await again.close();
    });
  });

  describe(`${backend.name} archive: a failing embedder`, () => {
    it('fails a write with the embedder error, while search answers from full text and warns', async () => {
      const table = await backend.table();
      const warnings: string[] = [];
      const healthy = await table.open();
      await healthy.write([summary('fe', 'kept', 'the capybara ledger')]);
      await healthy.close();
      const broken = { ...createHashingEmbedder(), embed: async () => Promise.reject(new MemfoldError('embedding_error', 'embedder down')) };
      // Vectors on (the hashing embedder alone ranks by full text), so that search calls the broken embedder.
      const archive = await table.open({ embedder: broken, fusionWeights: { fullText: 1, vector: 1 }, onWarning: (message) => warnings.push(message) });
      try {
        await expect(archive.write([summary('fe', 'lost', 'never stored')])).rejects.toMatchObject({ code: 'embedding_error' });
        expect(labelsOf(await archive.list({ conversationId: 'fe' }))).toEqual(['kept']);
        expect(labelsOf((await archive.search({ conversationId: 'fe', query: 'capybara' })).map((hit) => hit.entry))).toEqual(['kept']);
        expect(warnings.join('\n')).toMatch(/embedder down/);
      } finally {
        await archive.close();
        await table.cleanup();
      }
    });
  });
}

describe('lancedb archive: vector size', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  beforeAll(async () => {
    folder = await tempFolder('archive-reopen');
    const archive = await openLanceArchive({ uri: folder.dir, embedder });
    await archive.write([summary('keep', 's', 'a row fixes the table to 384 dimensions')]);
    await archive.close();
  });
  afterAll(async () => folder.cleanup());

  it('refuses an embedder of another vector size, naming the embedder and both sizes', async () => {
    const error = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder({ dimensions: 128 }) }).catch((e: unknown) => e);
    expect(MemfoldError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'archive_error' });
    expect((error as Error).message).toMatch(/384-dimensional/);
    expect((error as Error).message).toMatch(/hashing-128 makes 128-dimensional/);
  });

  it('refuses another embedder of the same size (its vectors live in another space)', async () => {
    const impostor = { ...createHashingEmbedder(), id: 'openai:text-embedding-3-small@384' };
    const error = await openLanceArchive({ uri: folder.dir, embedder: impostor }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'archive_error' });
    expect((error as Error).message).toMatch(/filled by embedder hashing-384, not openai:text-embedding-3-small@384/);
  });
});
