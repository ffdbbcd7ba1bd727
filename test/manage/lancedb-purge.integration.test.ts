/**
 * The LanceDB purge when the conversation is a small part of a large fragment (under Lance's 10% threshold, so
 * `optimize()` alone would leave its bytes in place): the rows sharing its fragment are rewritten, the indexes rebuilt,
 * old versions dropped; the other conversation reads back whole and is still found by full text.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { ArchiveEntry } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { filesContaining, uniqueWord } from './manage-fixtures.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const entry = (conversationId: string, word: string, i: number): ArchiveEntry => ({
  kind: 'transcript',
  label: `t-${i}`,
  conversationId,
  depth: 0,
  start: '2024-01-01T00:00:00.000Z',
  end: '2024-01-01T00:01:00.000Z',
  count: 1,
  content: `line ${i} mentions ${word}`,
  sourceIds: [`m-${i}`],
  operationId: 'op-1',
});

it('rewrites the fragment it shared, so no file keeps it', async () => {
  const uri = await mkdtemp(path.join(os.tmpdir(), 'memfold-purge-'));
  dirs.push(uri);
  const [doomed, other] = [uniqueWord('erasecase'), uniqueWord('keepcase')];
  const archive = await openLanceArchive({ uri, embedder: createHashingEmbedder() });
  // One write: one fragment, 95% the other conversation.
  await archive.write([
    ...Array.from({ length: 950 }, (_, i) => entry(other, 'pelican', i)),
    ...Array.from({ length: 50 }, (_, i) => entry(doomed, 'zorblax', i)),
  ]);
  const erased = await archive.eraseConversation!(doomed);
  expect(erased).toEqual({ entries: 50, rowsRewritten: 950 });
  expect(await filesContaining(uri, [doomed])).toEqual([]);
  expect((await filesContaining(uri, [other])).length).toBeGreaterThan(0);
  expect(await archive.list({ conversationId: other })).toHaveLength(950);
  expect((await archive.search({ conversationId: other, query: 'pelican line 7' })).length).toBeGreaterThan(0);
  expect(await archive.eraseConversation!(doomed)).toEqual({ entries: 0, rowsRewritten: 0 });
  await archive.close();
});
