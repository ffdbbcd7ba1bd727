/**
 * `readOnly` LanceDB archives: a reader beside the archive's writer (the CLI beside an app holding the embedded store)
 * changes no file of it. Opening makes no table and runs no index upkeep, even when an index lags past the optimize
 * threshold; every write is refused; a table the writer makes later is found.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { minute, summary, tempFolder } from './archive-fixtures.js';

const embedder = createHashingEmbedder();

/** Every file under `dir` with its size and modification time: what a write would change. */
async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const found = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map(async (entry) => {
        const file = path.join(entry.parentPath, entry.name);
        const info = await stat(file);
        return `${path.relative(dir, file)} ${info.size} ${info.mtimeMs}`;
      }),
  );
  return found.sort();
}

const rows = (from: number, count: number, word: string) =>
  Array.from({ length: count }, (_, i) =>
    summary('c', `${word}-${from + i}`, `row ${from + i} mentions ${word}`, { start: minute(from + i), end: minute(from + i) }),
  );

describe('lancedb archive: readOnly', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  beforeEach(async () => {
    folder = await tempFolder('read-only');
  });
  afterEach(async () => folder.cleanup());

  it('opens an archive whose index lags past the threshold without optimizing it, reads it, and changes no file', async () => {
    const writer = await openLanceArchive({ uri: folder.dir, embedder, optimizeAfterUnindexedRows: 1_000 });
    await writer.write(rows(0, 20, 'aardvark'));
    await writer.write(rows(100, 10, 'bumblebee'));
    await writer.close();
    const before = await files(folder.dir);

    // A writer opened so would optimize at once (10 unindexed rows against 1): the reader must not.
    const reader = await openLanceArchive({ uri: folder.dir, embedder, optimizeAfterUnindexedRows: 1, upkeepDelayMs: 0, readOnly: true });
    const hits = await reader.search({ conversationId: 'c', query: 'bumblebee', limit: 20 });
    expect(hits).toHaveLength(10);
    expect(await reader.list({ conversationId: 'c', kind: 'summary' })).toHaveLength(30);
    expect((await reader.read('c', ['aardvark-3']))[0]?.content).toBe('row 3 mentions aardvark');
    await reader.close();
    expect(await files(folder.dir)).toEqual(before);
  });

  it('refuses every write, mark, delete and erase, and changes no file', async () => {
    const writer = await openLanceArchive({ uri: folder.dir, embedder });
    await writer.write(rows(0, 3, 'aardvark'));
    await writer.close();
    const before = await files(folder.dir);
    const reader = await openLanceArchive({ uri: folder.dir, embedder, readOnly: true });
    const refusals = [
      reader.write(rows(10, 1, 'other')),
      reader.mark('c', ['aardvark-0'], 'aardvark-1'),
      reader.markEach('c', [{ label: 'aardvark-0', parentLabel: null }]),
      reader.delete('c', ['aardvark-0']),
      reader.eraseConversation!('c'),
    ];
    for (const refusal of refusals) await expect(refusal).rejects.toMatchObject({ code: 'archive_error', message: expect.stringMatching(/read-only/) });
    expect(await reader.list({ conversationId: 'c' })).toHaveLength(3);
    await reader.close();
    expect(await files(folder.dir)).toEqual(before);
  });

  it('makes no table where there is none, finds nothing, then finds what a writer archives later', async () => {
    const reader = await openLanceArchive({ uri: folder.dir, embedder, readOnly: true });
    expect(await reader.search({ conversationId: 'c', query: 'aardvark' })).toEqual([]);
    expect(await reader.list({ conversationId: 'c' })).toEqual([]);
    const db = await lancedb.connect(folder.dir);
    expect(await db.tableNames()).toEqual([]);
    db.close();

    const writer = await openLanceArchive({ uri: folder.dir, embedder });
    await writer.write(rows(0, 2, 'aardvark'));
    await writer.close();
    expect((await reader.search({ conversationId: 'c', query: 'aardvark' })).map((hit) => hit.entry.label).sort()).toEqual(['aardvark-0', 'aardvark-1']);
    await expect(reader.write(rows(5, 1, 'other'))).rejects.toMatchObject({ code: 'archive_error' });
    await reader.close();
  });
});
