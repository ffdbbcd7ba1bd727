/**
 * Archive format 2 on LanceDB: a transcript's messages are stored as frames into the searchable content (each
 * message's text once), and come back exactly as appended. Tables of format 1 (made with the columns before
 * `frames`) are read and written, rows of both formats side by side; the read-back catches an altered row of either
 * part (frames or content).
 */
import { connect } from '@lancedb/lancedb';
import { Field, Schema, Utf8 } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestProblem, entryDigest } from '../../src/archive/entry-digest.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { archiveSchema, COLUMN, toRow } from '../../src/archive/lancedb/lancedb-schema.js';
import { createArchiveWriter } from '../../src/compaction/batches/archive-writer.js';
import type { ArchiveEntry } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { message, summary, tempFolder, transcript } from './archive-fixtures.js';
import { renderedTranscript, shapes } from './transcript-shapes.js';

const embedder = createHashingEmbedder();
const TABLE = 'memfold_archive';

async function storedRow(dir: string, label: string): Promise<Record<string, unknown>> {
  const db = await connect(dir);
  const table = await db.openTable(TABLE);
  try {
    const names = (await table.schema()).fields.map((field) => field.name).filter((name) => name !== COLUMN.vector);
    const [row] = await table.query().where(`${COLUMN.label} = '${label}'`).select(names).toArray();
    return row as Record<string, unknown>;
  } finally {
    table.close();
    db.close();
  }
}

/** The archive's entries as JSON: key order and every byte of every message count. */
const json = (entries: ArchiveEntry[]) => entries.map((entry) => JSON.stringify(entry.messages));

describe('lancedb archive format 2: each message stored once', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  beforeAll(async () => {
    folder = await tempFolder('lance-frames');
  });
  afterAll(() => folder.cleanup());

  it('round-trips every message shape, through read, list and search, storing each text once', async () => {
    const messages = shapes('c');
    const rendered = renderedTranscript('c', 'seg-rendered', messages);
    const plain = transcript('c', 'seg-plain', messages, { content: rendered.content.replace(/\n {2}/g, '\n') });
    const output = renderedTranscript('c', 'out-1', [messages[2]!], { kind: 'tool_output' });
    const archive = await openLanceArchive({ uri: folder.dir, embedder });
    try {
      await archive.write([rendered, plain, output]);
      const read = await archive.read('c', ['seg-rendered', 'seg-plain', 'out-1']);
      expect(read).toEqual([rendered, plain, output]);
      expect(json(read)).toEqual(json([rendered, plain, output]));
      const listed = await archive.list({ conversationId: 'c', kind: 'transcript' });
      expect(json(listed.filter((entry) => entry.label === 'seg-rendered'))).toEqual(json([rendered]));
      const [hit] = await archive.search({ conversationId: 'c', query: 'flights', kind: 'tool_output' });
      expect(hit?.entry.messages).toEqual(output.messages);
    } finally {
      await archive.close();
    }
    const row = await storedRow(folder.dir, 'seg-rendered');
    expect(row[COLUMN.messages]).toBeNull();
    const frames = String(row[COLUMN.frames]);
    expect(frames).not.toContain('a long line of words');
    expect(frames.length).toBeLessThan(String(row[COLUMN.content]).length / 50);
  });

  it('reads a table of format 1, writes format 2 into it (adding the column), and reads both side by side', async () => {
    const old = await tempFolder('lance-frames-v1');
    try {
      const v1 = renderedTranscript('c', 'v1-seg', shapes('c'));
      const v1Summary = summary('c', 'v1-batch', 'summarized by an earlier version');
      const db = await connect(old.dir);
      const full = archiveSchema(embedder);
      const columns = new Schema(
        full.fields.filter((field) => field.name !== COLUMN.frames),
        full.metadata,
      );
      const created = await db.createEmptyTable(TABLE, columns);
      const rowOf = async (entry: ArchiveEntry) => {
        const row = toRow('default', entry, { startMs: Date.parse(entry.start), endMs: Date.parse(entry.end) }, (await embedder.embed([entry.content]))[0]!);
        delete row[COLUMN.frames];
        return row;
      };
      await created.add([await rowOf(v1), await rowOf(v1Summary)]);
      created.close();

      const archive = await openLanceArchive({ uri: old.dir, embedder });
      try {
        expect(json(await archive.read('c', ['v1-seg']))).toEqual(json([v1]));
        // A messagesOnly search reads the messages of a format-1 row from its JSON, the table lacking the frames column.
        const lean = async (query: string, label: string) =>
          (await archive.search({ conversationId: 'c', query, kind: 'transcript', messagesOnly: true, limit: 10 })).find((hit) => hit.entry.label === label)
            ?.entry.messages;
        expect(JSON.stringify(await lean(v1.content.match(/[A-Za-z]{6,}/)![0], 'v1-seg'))).toEqual(JSON.stringify(v1.messages));
        const v2 = renderedTranscript('c', 'v2-seg', [message('c', 20, 'written in format 2, after the upgrade')], { operationId: 'op-2' });
        const writer = createArchiveWriter({ archive, conversationId: 'c', operationId: 'op-2' });
        await writer.writeVerified([v2]);
        const table = await db.openTable(TABLE);
        expect((await table.schema()).fields.map((field) => field.name)).toContain(COLUMN.frames);
        // A writer of format 1 leaves the new column out: LanceDB fills it with nulls, and its row reads as before.
        const later = renderedTranscript('c', 'v1-later', [message('c', 21, 'an earlier version writes again')], { operationId: 'op-3' });
        await table.add([await rowOf(later)]);
        const read = await archive.read('c', ['v1-seg', 'v1-batch', 'v2-seg', 'v1-later']);
        expect(read).toEqual([v1, v1Summary, v2, later]);
        expect(json(read)).toEqual(json([v1, v1Summary, v2, later]));
        expect((await archive.search({ conversationId: 'c', query: 'earlier version writes' })).map((hit) => hit.entry.label)).toContain('v1-later');
        expect(JSON.stringify(await lean('earlier version writes', 'v1-later'))).toEqual(JSON.stringify(later.messages));
        expect(JSON.stringify(await lean('written format upgrade', 'v2-seg'))).toEqual(JSON.stringify(v2.messages));
        expect((await storedRow(old.dir, 'v1-seg'))[COLUMN.frames]).toBeNull();
        expect((await storedRow(old.dir, 'v2-seg'))[COLUMN.messages]).toBeNull();
        // A format 1 row's digest is of its JSON: not what this version writes, so a read-back never mistakes one for the other.
        const [digest] = await archive.readDigests!('c', ['v1-later']);
        expect(digestProblem(entryDigest(later), digest)).toBe('transcript messages differ');
        table.close();
      } finally {
        await archive.close();
        db.close();
      }
    } finally {
      await old.cleanup();
    }
  });
});

describe('lancedb archive: a table with a column of a later version', () => {
  it('takes appends (LanceDB fills the column with nulls) and refuses a merge, naming the column', async () => {
    const later = await tempFolder('lance-frames-later');
    try {
      const db = await connect(later.dir);
      const full = archiveSchema(embedder);
      const created = await db.createEmptyTable(TABLE, new Schema([...full.fields, new Field('later_column', new Utf8(), true)], full.metadata));
      created.close();
      db.close();
      const archive = await openLanceArchive({ uri: later.dir, embedder });
      try {
        const segment = renderedTranscript('c', 'seg', shapes('c').slice(0, 4));
        await archive.write([segment, summary('c', 'batch', 'a summary')]);
        expect(json(await archive.read('c', ['seg']))).toEqual(json([segment]));
        await expect(archive.write([segment])).rejects.toMatchObject({ message: expect.stringContaining('later_column') });
      } finally {
        await archive.close();
      }
    } finally {
      await later.cleanup();
    }
  });
});

describe('lancedb archive format 2: the read-back catches an altered row', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  beforeAll(async () => {
    folder = await tempFolder('lance-frames-digests');
  });
  afterAll(() => folder.cleanup());

  const segment = renderedTranscript('c', 'seg', [
    message('c', 1, 'the first message, long enough to be referenced'),
    message('c', 2, 'the reply, also long enough to be referenced', 'assistant'),
  ]);

  it.each([
    ['transcript messages differ', `${COLUMN.frames} = replace(${COLUMN.frames}, '"assistant"', '"user"')`],
    ['transcript messages differ', `${COLUMN.frames} = replace(${COLUMN.frames}, 'c-m2', 'c-m9')`],
    ['content differs', `${COLUMN.content} = replace(${COLUMN.content}, 'the reply', 'THE REPLY')`],
    ['count differs', `${COLUMN.count} = 3`],
  ])('a v2 row changed after the write fails it: %s (%s)', async (problem, valuesSql) => {
    const [column, sql] = valuesSql.split(' = ') as [string, string];
    const operationId = `op-${valuesSql}`;
    const written = { ...segment, label: `seg-${column}-${problem}-${sql.length}`, operationId };
    const archive = await openLanceArchive({ uri: folder.dir, embedder });
    try {
      const writer = createArchiveWriter({ archive, conversationId: 'c', operationId });
      await writer.writeVerified([written]);
      const db = await connect(folder.dir);
      const table = await db.openTable(TABLE);
      await table.update({ where: `${COLUMN.label} = '${written.label}'`, valuesSql: { [column]: sql } });
      table.close();
      db.close();
      const [stored] = await archive.readDigests!('c', [written.label]);
      expect(digestProblem(entryDigest(written), stored)).toBe(problem);
    } finally {
      await archive.close();
    }
  });
});
