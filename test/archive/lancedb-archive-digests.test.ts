/**
 * The read-back's digests: LanceDB hashes the stored columns in its own engine, and they must equal what
 * `entryDigest` computes from the entry written; a row missing or changed after the write (any compared field,
 * a transcript altered without changing its length included) fails the archive writer's read-back.
 */
import { connect } from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { digestProblem, entryDigest } from '../../src/archive/entry-digest.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { COLUMN } from '../../src/archive/lancedb/lancedb-schema.js';
import { createArchiveWriter } from '../../src/compaction/batches/archive-writer.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { message, minute, summary, tempFolder, transcript } from './archive-fixtures.js';

const embedder = createHashingEmbedder();

const segment = transcript('c', 'seg-1', [message('c', 1, 'Grüße, naïve café 😀 and "quotes"\n'), message('c', 2, 'reply', 'assistant')], {
  sessions: ['day-1', 'day-2'],
});
const entries = [
  summary('c', 'batch-1', 'a summary with ünïcode ✓'),
  summary('c', 'batch-empty', '', { sourceIds: [], count: 0, start: minute(3), end: minute(4) }),
  segment,
];

/** Runs `change` on the stored table after each write: a write that lost or altered rows, as a faulty store would. */
function tamperedAfterWrite(
  archive: Archive,
  dir: string,
  change: (table: Awaited<ReturnType<Awaited<ReturnType<typeof connect>>['openTable']>>) => Promise<unknown>,
): Archive {
  return {
    ...archive,
    async write(written) {
      await archive.write(written);
      const db = await connect(dir);
      const table = await db.openTable('memfold_archive');
      try {
        await change(table);
      } finally {
        table.close();
        db.close();
      }
    },
  };
}

describe('lancedb archive: read-back digests', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;
  beforeAll(async () => {
    folder = await tempFolder('lance-digests');
    archive = await openLanceArchive({ uri: folder.dir, embedder });
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('are the digests of the entries written, in the order asked, missing labels left out', async () => {
    await archive.write(entries);
    const digests = await archive.readDigests!('c', ['seg-1', 'nothing', 'batch-empty', 'batch-1']);
    expect(digests).toEqual([entryDigest(segment), entryDigest(entries[1]!), entryDigest(entries[0]!)]);
    expect(await archive.readDigests!('other', ['seg-1'])).toEqual([]);
  });

  it('read back at once for several conversations (sharing a query), each gets its own rows', async () => {
    const ids = ['d0', 'd1', "d'2"];
    const written = ids.map((id) => [summary(id, 'batch-1', `summary of ${id}`), summary(id, 'batch-2', `more of ${id}`)]);
    await Promise.all(written.map((w) => archive.write(w)));
    const digests = await Promise.all(ids.map((id) => archive.readDigests!(id, ['batch-2', 'batch-1', 'nothing'])));
    expect(digests).toEqual(written.map(([one, two]) => [entryDigest(two!), entryDigest(one!)]));
  });

  it.each([
    ['content differs', `${COLUMN.content} = 'changed'`],
    ['transcript messages differ', `${COLUMN.frames} = replace(${COLUMN.frames}, '"assistant"', '"tool"')`],
    ['source ids differ', `${COLUMN.sourceIds} = make_array('c-m1', 'c-mX')`],
    ['sessions differ', `${COLUMN.sessions} = make_array('day-1')`],
    ['count differs', `${COLUMN.count} = 7`],
  ])('a stored row changed after the write fails the read-back: %s', async (problem, valuesSql) => {
    const [column, sql] = valuesSql.split(' = ') as [string, string];
    const operationId = `op-${problem}`;
    const written = { ...segment, label: `seg-${problem}`, operationId };
    const writer = createArchiveWriter({
      archive: tamperedAfterWrite(archive, folder.dir, (table) =>
        table.update({ where: `${COLUMN.label} = '${written.label}'`, valuesSql: { [column]: sql } }),
      ),
      conversationId: 'c',
      operationId,
    });
    await expect(writer.writeVerified([written])).rejects.toMatchObject({ name: 'ReadbackError', message: expect.stringContaining(problem) });
    const [stored] = await archive.readDigests!('c', [written.label]);
    expect(digestProblem(entryDigest(written), stored)).toBe(problem);
  });

  it('a text with a lone surrogate (stored as U+FFFD) fails the read-back, as comparing the texts did', async () => {
    const written = summary('c', 'half-pair', `cut in half \uD83D here`, { operationId: 'op-half' });
    const writer = createArchiveWriter({ archive, conversationId: 'c', operationId: 'op-half' });
    await expect(writer.writeVerified([written])).rejects.toMatchObject({ name: 'ReadbackError', message: expect.stringContaining('content differs') });
    expect((await archive.read('c', ['half-pair']))[0]!.content).toBe('cut in half \uFFFD here');
  });

  it('a row lost after the write fails the read-back as missing', async () => {
    const written = summary('c', 'lost', 'written, then gone', { operationId: 'op-lost' });
    const writer = createArchiveWriter({
      archive: tamperedAfterWrite(archive, folder.dir, (table) => table.delete(`${COLUMN.label} = 'lost'`)),
      conversationId: 'c',
      operationId: 'op-lost',
    });
    await expect(writer.writeVerified([written])).rejects.toMatchObject({ name: 'ReadbackError', message: expect.stringContaining('missing after write') });
  });

  it('an unchanged write reads back clean through the writer', async () => {
    const writer = createArchiveWriter({ archive, conversationId: 'c', operationId: 'op-clean' });
    await writer.writeVerified([{ ...segment, label: 'seg-clean', operationId: 'op-clean' }, summary('c', 'clean', 'fine', { operationId: 'op-clean' })]);
    expect(writer.written).toEqual(['seg-clean', 'clean']);
  });

  it('a write of more labels than one query reads (slices read at once) is read back whole; a row lost in a later slice fails it', async () => {
    const many = Array.from({ length: 1_700 }, (_, i) => summary('c', `many-${i}`, `summary number ${i}`, { operationId: 'op-many' }));
    const asked = [...many].reverse().map((e) => e.label);
    await archive.write(many);
    expect(await archive.readDigests!('c', asked)).toEqual([...many].reverse().map(entryDigest));

    const lostOne = many.map((e) => ({ ...e, label: `lost-${e.label}`, operationId: 'op-lost-one' }));
    const writer = createArchiveWriter({
      archive: tamperedAfterWrite(archive, folder.dir, (table) => table.delete(`${COLUMN.label} = 'lost-many-1600'`)),
      conversationId: 'c',
      operationId: 'op-lost-one',
    });
    await expect(writer.writeVerified(lostOne)).rejects.toMatchObject({
      name: 'ReadbackError',
      message: expect.stringContaining('lost-many-1600: missing after write'),
    });
  });
});
