/**
 * createMemfold({ store: 'memory' }): a whole session (append, compaction over the trigger, the context
 * with its clip-archive, memory_read finding an archived fact) with no file created anywhere.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemfold } from '../src/memfold.js';
import { dialogue } from './support/messages.js';

describe("createMemfold({ store: 'memory' })", () => {
  let root: string;
  let cwd: string;
  let home: string;
  const startCwd = process.cwd();

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'memfold-memory-store-'));
    cwd = path.join(root, 'cwd');
    home = path.join(root, 'home');
    await Promise.all([cwd, home].map((dir) => import('node:fs/promises').then((fs) => fs.mkdir(dir))));
    // The embedded default would put ./.memfold here: the in-memory store must not.
    process.chdir(cwd);
  });
  afterAll(async () => {
    process.chdir(startCwd);
    await rm(root, { recursive: true, force: true });
  });

  it('compacts a session and finds an archived fact with memory_read, creating no files in the cwd or home', async () => {
    const memfold = await createMemfold({
      store: 'memory',
      // No DATABASE_URL, MEMFOLD_HOME or LANCEDB_URI: only the store option keeps files away.
      env: { HOME: home },
      compaction: { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 },
    });
    try {
      expect(memfold.persistence.backend).toBe('memory');
      const id = 'session';
      await memfold.append(id, [{ role: 'system', content: 'You are terse.' }, ...dialogue(5)]);
      await memfold.append(id, [
        { role: 'user', content: 'Remember this: the storage locker code is 7351-heron.', createdAt: '2024-03-01T08:10:30.000Z' },
        { role: 'assistant', content: 'Noted, the locker code is 7351-heron.', createdAt: '2024-03-01T08:10:40.000Z' },
      ]);
      await memfold.append(id, dialogue(25, 5));
      const below = await memfold.compact(id);
      expect(below.status).toBe('compacted');
      expect(below.archivedMessages).toBeGreaterThan(20);
      expect(below.tokensAfter).toBeLessThan(memfold.compactor.settings.trigger);

      const context = await memfold.context(id);
      expect(context[0]!.content).toBe('You are terse.');
      expect(context[1]).toMatchObject({ kind: 'clip_archive', role: 'system' });
      expect(context[1]!.content.startsWith('[Context Summary')).toBe(true);
      expect(context.at(-1)!.content).toContain('topic-29');
      // The fact was archived, not kept verbatim.
      expect(context.some((message) => message.kind === 'message' && message.content.includes('7351-heron'))).toBe(false);

      const read = await memfold.memoryRead(id).execute({ query: 'storage locker code' });
      expect(read.ok).toBe(true);
      expect(read.output).toContain('7351-heron');
      const hits = await memfold.archive.search({ conversationId: id, query: 'topic-3 1003' });
      expect(hits.length).toBeGreaterThan(0);
    } finally {
      await memfold.close();
    }
    expect(await readdir(cwd)).toEqual([]);
    expect(await readdir(home)).toEqual([]);
  });

  it('refuses another store value, naming the option', async () => {
    await expect(createMemfold({ store: 'disk' as never, env: {} })).rejects.toMatchObject({ field: 'store' });
  });
});
