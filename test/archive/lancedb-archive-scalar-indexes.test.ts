import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { DEFAULT_LANCE_ARCHIVE_OPTIONS, openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { minute, summary, tempFolder } from './archive-fixtures.js';

const embedder = createHashingEmbedder();

async function indexedColumns(dir: string): Promise<string[]> {
  const db = await lancedb.connect(dir);
  try {
    const table = await db.openTable(DEFAULT_LANCE_ARCHIVE_OPTIONS.tableName);
    return (await table.listIndices()).flatMap((index) => index.columns).sort();
  } finally {
    db.close();
  }
}

const rows = (conversationId: string, count: number, depth: number) =>
  Array.from({ length: count }, (_, i) =>
    summary(conversationId, `${conversationId}-${i}`, `row ${i} of ${conversationId} mentions a narwhal`, { start: minute(i), end: minute(i), depth }),
  );

describe('lancedb archive: scalarIndexes option', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  beforeAll(async () => {
    folder = await tempFolder('scalar-indexes');
  });
  afterAll(async () => folder.cleanup());

  it('false creates only the full-text index, and filtered search and list still answer', async () => {
    const archive = await openLanceArchive({ uri: folder.dir, embedder, scalarIndexes: false });
    await archive.write([...rows('a', 20, 0), ...rows('b', 20, 1)]);
    expect(await indexedColumns(folder.dir)).toEqual(['content']);
    const hits = await archive.search({ conversationId: 'b', query: 'narwhal', limit: 50 });
    expect(hits).toHaveLength(20);
    expect(hits.every((hit) => hit.entry.conversationId === 'b')).toBe(true);
    expect(await archive.list({ conversationId: 'a', depth: 0 })).toHaveLength(20);
    expect(await archive.list({ conversationId: 'a', depth: 1 })).toHaveLength(0);
    await archive.close();
  });

  it('the default (true) creates the missing scalar indexes when it opens the same table', async () => {
    const archive = await openLanceArchive({ uri: folder.dir, embedder });
    expect(await indexedColumns(folder.dir)).toEqual(['content', 'conversation_id', 'depth', 'key', 'kind', 'namespace']);
    expect(await archive.search({ conversationId: 'a', query: 'narwhal', limit: 50 })).toHaveLength(20);
    await archive.close();
  });

  it('refuses a value that is not a boolean, naming the field', async () => {
    await expect(openLanceArchive({ uri: folder.dir, embedder, scalarIndexes: 'no' as unknown as boolean })).rejects.toThrow(/scalarIndexes/);
  });
});
