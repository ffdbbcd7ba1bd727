/**
 * Group commit: writes that reach the table while an earlier write holds its queue share one LanceDB commit, and
 * each still resolves (or fails) as its own.
 */
import * as lancedb from '@lancedb/lancedb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LANCE_ARCHIVE_OPTIONS, openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { message, summary, tempFolder, transcript } from './archive-fixtures.js';

const embedder = createHashingEmbedder();

/** The table's version, read through a connection of its own, as another process would. */
async function tableVersion(dir: string): Promise<number> {
  const db = await lancedb.connect(dir);
  try {
    return await (await db.openTable(DEFAULT_LANCE_ARCHIVE_OPTIONS.tableName)).version();
  } finally {
    db.close();
  }
}

describe('lancedb archive: group commit of concurrent writes', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;
  beforeEach(async () => {
    folder = await tempFolder('write-group');
    // Index upkeep far off: the versions counted are the writes' alone.
    archive = await openLanceArchive({ uri: folder.dir, embedder, upkeepDelayMs: 60_000 });
    await archive.write([summary('first', 'b0', 'the first write creates the table and its indexes')]);
  });
  afterEach(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('commits writes queued behind one write as one version, each readable once its own write resolves', async () => {
    const before = await tableVersion(folder.dir);
    const ids = ['a', 'b', 'c', 'd'];
    await Promise.all(
      ids.map(async (id) => {
        await archive.write([summary(id, `${id}-1`, `batch of ${id}`), summary(id, `${id}-2`, `second batch of ${id}`)]);
        expect((await archive.read(id, [`${id}-1`, `${id}-2`])).map((e) => e.content)).toEqual([`batch of ${id}`, `second batch of ${id}`]);
      }),
    );
    // Written one by one, four commits; here one (or two, had the first started before the others were made).
    expect((await tableVersion(folder.dir)) - before).toBeLessThanOrEqual(2);
  });

  it('refuses only the write that names another operation’s label; the writes beside it land', async () => {
    await archive.write([summary('a', 'held', 'written by op-1')]);
    const results = await Promise.allSettled([
      archive.write([summary('b', 'b-1', 'beside it, first')]),
      archive.write([summary('a', 'held', 'a rewrite by another operation', { operationId: 'op-2' })]),
      archive.write([summary('c', 'c-1', 'beside it, last')]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toMatch(/held \(operation op-1\)/);
    expect((await archive.read('a', ['held']))[0]?.content).toBe('written by op-1');
    expect((await archive.read('b', ['b-1'])).length).toBe(1);
    expect((await archive.read('c', ['c-1'])).length).toBe(1);
  });

  it('applies writes of one label in the order made, as if one after another', async () => {
    await archive.write([summary('a', 'x', 'first')]);
    await Promise.all([
      archive.write([summary('a', 'y', 'queued')]),
      archive.write([summary('a', 'z', 'z first')]),
      archive.write([summary('a', 'z', 'z second')]),
    ]);
    expect((await archive.read('a', ['y', 'z'])).map((e) => e.content)).toEqual(['queued', 'z second']);
    expect(await archive.list({ conversationId: 'a' })).toHaveLength(3);
  });

  it('fails only the write whose own rows cannot be stored; the writes beside it land', async () => {
    // A transcript message that is no message (null): its rows cannot be laid out, whichever write it shares a commit with.
    const broken = transcript('bad', 't-bad', [message('bad', 1, 'fine')], { messages: [null as never] });
    const results = await Promise.allSettled([
      archive.write([summary('b', 'b-1', 'beside it, first')]),
      archive.write([broken]),
      archive.write([summary('c', 'c-1', 'beside it, last')]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await archive.list({ conversationId: 'bad' })).toEqual([]);
    expect((await archive.read('b', ['b-1'])).length).toBe(1);
    expect((await archive.read('c', ['c-1'])).length).toBe(1);
  });

  it('appends the labels a caller found free without looking them up (labelsFree); without the flag it looks them up', async () => {
    await archive.write([summary('a', 'x', 'first')]);
    // Rewritten by the same operation: looked up, the row is replaced in place.
    await archive.write([summary('a', 'x', 'second')]);
    expect(await archive.count!({ conversationId: 'a' })).toBe(1);
    // Told the label is free, the write appends at once: the flag reaches the table (a wrong claim leaves two rows,
    // which is why only a caller that checked under the conversation's lock may make it).
    await archive.write([summary('a', 'x', 'third')], { labelsFree: true });
    expect(await archive.count!({ conversationId: 'a' })).toBe(2);
    await archive.write([summary('a', 'y', 'fresh')], { labelsFree: true });
    expect((await archive.read('a', ['y'])).map((e) => e.content)).toEqual(['fresh']);
  });
});
