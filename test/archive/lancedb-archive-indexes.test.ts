import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { DEFAULT_LANCE_ARCHIVE_OPTIONS } from '../../src/archive/lancedb/lancedb-archive.js';
import { minute, summary, tempFolder } from './archive-fixtures.js';

const embedder = createHashingEmbedder();
const TABLE = DEFAULT_LANCE_ARCHIVE_OPTIONS.tableName;

/** Inspect the table the way an operator would, through a separate LanceDB connection. */
async function indexState(dir: string): Promise<Map<string, { type: string; unindexed: number }>> {
  const db = await lancedb.connect(dir);
  try {
    const table = await db.openTable(TABLE);
    const indexes = await table.listIndices();
    return new Map(indexes.map((index) => [index.columns.join(','), { type: index.indexType, unindexed: index.numUnindexedRows ?? 0 }]));
  } finally {
    db.close();
  }
}

const rows = (conversationId: string, from: number, count: number, word: string, depth = 0) =>
  Array.from({ length: count }, (_, i) =>
    summary(conversationId, `${word}-${from + i}`, `row ${from + i} mentions ${word} and the usual filler`, {
      start: minute(from + i),
      end: minute(from + i),
      depth,
    }),
  );

describe('lancedb archive: index policy', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  beforeAll(async () => {
    folder = await tempFolder('indexes');
  });
  afterAll(async () => folder.cleanup());

  it('creates no index on an empty table, then scalar and full-text indexes (never a vector index) on the first write', async () => {
    const archive = await openLanceArchive({ uri: folder.dir, embedder });
    expect((await indexState(folder.dir)).size).toBe(0);
    await archive.write(rows('c', 0, 30, 'aardvark'));
    const state = await indexState(folder.dir);
    expect(state.get('conversation_id')?.type).toBe('BTree');
    expect(state.get('depth')?.type).toBe('Bitmap');
    expect(state.get('content')?.type).toBe('FTS');
    expect(state.has('vector')).toBe(false);
    expect([...state.values()].every((index) => index.unindexed === 0)).toBe(true);
    await archive.close();
  });

  it('finds rows written after the indexes exist, by full text and by filters, before any optimize', async () => {
    const archive = await openLanceArchive({ uri: folder.dir, embedder });
    await archive.write(rows('c', 100, 10, 'bumblebee', 2));
    await archive.mark('c', ['aardvark-0'], 'bumblebee-100');
    const state = await indexState(folder.dir);
    expect(state.get('content')?.unindexed).toBeGreaterThan(0); // below the optimize threshold: still unindexed
    const hits = await archive.search({ conversationId: 'c', query: 'bumblebee', limit: 10 });
    expect(hits.map((hit) => hit.entry.label).sort()).toEqual(
      rows('c', 100, 10, 'bumblebee')
        .map((entry) => entry.label)
        .sort(),
    );
    expect((await archive.list({ conversationId: 'c', depth: 2 })).map((entry) => entry.label)).toHaveLength(10);
    expect((await archive.list({ conversationId: 'c', unmarkedOnly: true, depth: 0 })).map((entry) => entry.label)).not.toContain('aardvark-0');
    await archive.close();
  });

  it('optimizes once enough rows are unindexed (behind the write, finished by close), and the rows are found meanwhile', async () => {
    const archive = await openLanceArchive({ uri: folder.dir, embedder, optimizeAfterUnindexedRows: 5 });
    await archive.write(rows('c', 200, 5, 'cassowary', 3));
    // Full-text hits come first; vector neighbours fill the rest of the limit.
    const hits = await archive.search({ conversationId: 'c', query: 'cassowary', limit: 10 });
    expect(
      hits
        .slice(0, 5)
        .map((hit) => hit.entry.label)
        .sort(),
    ).toEqual(['cassowary-200', 'cassowary-201', 'cassowary-202', 'cassowary-203', 'cassowary-204']);
    expect(await archive.list({ conversationId: 'c', depth: 3 })).toHaveLength(5);
    expect((await archive.search({ conversationId: 'c', query: 'bumblebee', limit: 10 })).every((hit) => hit.entry.label.startsWith('bumblebee'))).toBe(true);
    await archive.close();
    const state = await indexState(folder.dir);
    expect([...state.values()].map((index) => index.unindexed)).toEqual([...state.values()].map(() => 0));
  });

  it('waits for the writes to pause before it optimizes: a burst of writes never waits for upkeep between them', async () => {
    const archive = await openLanceArchive({ uri: folder.dir, embedder, optimizeAfterUnindexedRows: 5, upkeepDelayMs: 2_000 });
    await archive.write(rows('c', 300, 5, 'dormouse'));
    await archive.write(rows('c', 305, 5, 'dormouse'));
    // Due twice over, not run yet: the writes have not paused for 2 s.
    expect((await indexState(folder.dir)).get('content')?.unindexed).toBeGreaterThanOrEqual(10);
    expect((await archive.search({ conversationId: 'c', query: 'dormouse', limit: 20 })).length).toBe(10);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect([...(await indexState(folder.dir)).values()].map((index) => index.unindexed)).toEqual([...(await indexState(folder.dir)).values()].map(() => 0));
    await archive.close();
  });

  it('holds a due upkeep while a write embeds, however long that takes: the write never waits for it', async () => {
    // An embedder that takes 1.5 s once asked to: longer than the pause that lets upkeep start.
    let slowMs = 0;
    const slow = {
      ...embedder,
      embed: async (texts: string[], options?: { signal?: AbortSignal }) => {
        if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
        return embedder.embed(texts, options);
      },
    };
    const archive = await openLanceArchive({ uri: folder.dir, embedder: slow, optimizeAfterUnindexedRows: 5, upkeepDelayMs: 500 });
    await archive.write(rows('c', 400, 5, 'echidna'));
    slowMs = 1_500;
    await archive.write(rows('c', 405, 5, 'echidna'));
    // Had the upkeep started 500 ms into the embedding, the write would have waited for it, and the rows be indexed.
    expect((await indexState(folder.dir)).get('content')?.unindexed).toBeGreaterThanOrEqual(10);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await indexState(folder.dir)).get('content')?.unindexed).toBe(0);
    await archive.close();
  });

  it('refuses a negative or fractional upkeepDelayMs', async () => {
    await expect(openLanceArchive({ uri: folder.dir, embedder, upkeepDelayMs: -1 })).rejects.toMatchObject({ field: 'upkeepDelayMs' });
    await expect(openLanceArchive({ uri: folder.dir, embedder, upkeepDelayMs: 1.5 })).rejects.toMatchObject({ field: 'upkeepDelayMs' });
  });

  it('recreates missing indexes when it opens a table that has rows', async () => {
    const db = await lancedb.connect(folder.dir);
    const table = await db.openTable(TABLE);
    for (const index of await table.listIndices()) await table.dropIndex(index.name);
    db.close();
    expect((await indexState(folder.dir)).size).toBe(0);
    const archive = await openLanceArchive({ uri: folder.dir, embedder });
    expect([...(await indexState(folder.dir)).keys()].sort()).toEqual(['content', 'conversation_id', 'depth', 'key', 'kind', 'namespace']);
    const hits = await archive.search({ conversationId: 'c', query: 'aardvark', limit: 50 });
    expect(hits.slice(0, 30).every((hit) => hit.entry.label.startsWith('aardvark'))).toBe(true);
    await archive.close();
  });
});
