/**
 * Background compaction follows a conversation's stored settings, across processes. On PGlite: settings stored by
 * one createMemfold (a 4,096-token window, `background: true`) make a later one, given no settings, queue and run the
 * job in its own process when its appends pass that window's trigger. On PostgreSQL: a job queued by an application
 * given no settings is compacted by `memfold worker` with the stored window (the default window would skip it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultTrigger } from '../../src/compaction/compaction-settings-defaults.js';
import { createMemfold } from '../../src/memfold.js';
import type { MemfoldEvent } from '../../src/memfold-options.js';
import { copyPgliteTemplate, createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { orderChat } from '../support/messages.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
const WINDOW = 4_096;

describe('on PGlite: the appending process', () => {
  it('queues and runs a job by the stored window and background setting, given none itself', async () => {
    const { root } = await copyPgliteTemplate();
    try {
      const app = await createMemfold({ env: {}, config: { home: root } });
      await app.configure({ contextWindow: WINDOW, background: true }, { conversationId: 'c' });
      await app.close();

      const events: MemfoldEvent[] = [];
      let ended: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (ended = resolve));
      const later = await createMemfold({
        env: {},
        config: { home: root },
        onEvent: (event) => {
          events.push(event);
          if (event.type === 'compaction_job_ended') ended();
        },
      });
      try {
        for (let turn = 0; turn < 55; turn++) await later.append('c', orderChat(1, turn));
        await done;
        expect(events.find((e) => e.type === 'compaction_job_ended')).toMatchObject({ conversationId: 'c', status: 'compacted' });
        // Queued once the appends passed the stored window's trigger (the default window's is 102,400).
        const queued = events.find((e) => e.type === 'compaction_queued');
        expect(queued).toMatchObject({ conversationId: 'c' });
        expect(await later.usage('c')).toMatchObject({ contextWindow: WINDOW, trigger: defaultTrigger(WINDOW) });
      } finally {
        await later.close();
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 60_000);
});

const serverUrl = postgresServerUrl();

describe.skipIf(serverUrl === undefined)('on PostgreSQL: memfold worker', () => {
  let database: { url: string; drop(): Promise<void> };
  let lanceRoot: string;
  let worker: ChildProcess | undefined;
  beforeAll(async () => {
    database = await createPostgresTestDatabase(serverUrl!);
    ({ root: lanceRoot } = await copyPgliteTemplate());
  });
  afterAll(async () => {
    if (worker?.exitCode === null) worker.kill('SIGKILL');
    await database.drop();
    await rm(lanceRoot, { recursive: true, force: true });
  });

  it('compacts a job queued by a process given no settings with the stored window', async () => {
    const env = { MEMFOLD_DATABASE_URL: database.url, LANCEDB_URI: `${lanceRoot}/lancedb` };
    const owner = await createMemfold({ env });
    await owner.configure({ contextWindow: WINDOW }, { conversationId: 'w' });
    await owner.append('w', orderChat(55));
    await owner.close();

    // Another application, given no settings: it queues the job with the settings it reads from the store.
    const app = await createMemfold({ env });
    try {
      expect(await app.compact('w', { background: true })).toMatchObject({ queued: true, engine: 'pg-boss' });
      worker = spawn(process.execPath, [BIN, 'worker', '--concurrency', '1'], { env: { PATH: process.env.PATH ?? '', ...env } });
      const lines: string[] = [];
      worker.stdout!.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
      while (!lines.some((line) => line.includes(' w (job '))) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(lines.find((line) => line.includes(' w (job '))).toMatch(/^compacted w /);
      worker.kill('SIGTERM');
      await new Promise((resolve) => worker!.once('exit', resolve));
      expect((await app.usage('w')).tokens).toBeLessThan(defaultTrigger(WINDOW));
      // The worker applied the job's settings in its process only: the stored ones are as the owner set them.
      expect((await app.conversationSettings('w')).stored).toStrictEqual({ contextWindow: WINDOW });
    } finally {
      await app.close();
    }
  }, 90_000);
});
