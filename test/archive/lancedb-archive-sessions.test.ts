/**
 * The sessions column on LanceDB tables made before it existed: such a table still opens and is read (its entries
 * have no sessions), and its first write adds the column, keeping every row; an archive opened before that write
 * (another process) reads the new column as soon as it is there, and writes of an earlier version still land.
 */
import { connect } from '@lancedb/lancedb';
import { Schema } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { archiveSchema, COLUMN, toRow } from '../../src/archive/lancedb/lancedb-schema.js';
import type { ArchiveEntry } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { message, minute, summary, tempFolder, transcript } from './archive-fixtures.js';

const embedder = createHashingEmbedder();
const TABLE = 'memfold_archive';

/** A row as a version without the sessions column wrote it. */
async function oldRow(entry: ArchiveEntry): Promise<Record<string, unknown>> {
  const [vector] = await embedder.embed([entry.content]);
  const row = toRow('default', entry, { startMs: Date.parse(entry.start), endMs: Date.parse(entry.end) }, vector!);
  delete row[COLUMN.sessions];
  return row;
}

describe('lancedb archive: a table made before the sessions column', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  const old = summary('c', 'old-batch', 'archived by an earlier version', { start: minute(0), end: minute(1) });

  beforeAll(async () => {
    folder = await tempFolder('lance-sessions');
    const db = await connect(folder.dir);
    const full = archiveSchema(embedder);
    const schema = new Schema(
      full.fields.filter((field) => field.name !== COLUMN.sessions),
      full.metadata,
    );
    const table = await db.createEmptyTable(TABLE, schema);
    await table.add([await oldRow(old)]);
    table.close();
    db.close();
  });
  afterAll(() => folder.cleanup());

  it('opens and reads it, writes to it (adding the column), and another archive sees the sessions; older writers still land', async () => {
    const reader = await openLanceArchive({ uri: folder.dir, embedder });
    const writer = await openLanceArchive({ uri: folder.dir, embedder });
    try {
      expect(await reader.read('c', ['old-batch'])).toEqual([old]);
      expect(await reader.search({ conversationId: 'c', query: 'earlier version' })).toHaveLength(1);

      const batch = summary('c', 'new-batch', 'archived with sessions', { start: minute(2), end: minute(3), sessions: ['day-1', 'day-2'] });
      const segment = transcript('c', 'new-segment', [{ ...message('c', 2, 'hi'), sessionId: 'day-1' }], { sessions: ['day-1'] });
      await writer.write([batch, segment]);
      const db = await connect(folder.dir);
      const table = await db.openTable(TABLE);
      expect((await table.schema()).fields.map((field) => field.name)).toContain(COLUMN.sessions);

      // The archive opened before the column existed reads it now; the old row has no sessions.
      expect(await reader.read('c', ['old-batch', 'new-batch', 'new-segment'])).toEqual([old, batch, segment]);
      expect((await reader.list({ conversationId: 'c', kind: 'summary' })).map((e) => e.sessions)).toEqual([undefined, ['day-1', 'day-2']]);

      // A writer of the earlier version leaves the column out: LanceDB fills it with nulls.
      const older = summary('c', 'older-writer', 'written without the column', { start: minute(4), end: minute(5) });
      await table.add([await oldRow(older)]);
      table.close();
      db.close();
      expect(await writer.read('c', ['older-writer'])).toEqual([older]);

      // Writing again (the reader's first write) is fine once the column exists.
      await reader.write([summary('c', 'late', 'late batch', { start: minute(6), end: minute(7), sessions: ['day-3'] })]);
      expect((await writer.read('c', ['late']))[0]!.sessions).toEqual(['day-3']);
    } finally {
      await reader.close();
      await writer.close();
    }
  });
});
