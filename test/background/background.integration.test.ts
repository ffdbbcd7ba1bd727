/**
 * Background compaction as users run it. On PGlite: jobs run in the appending process. On PostgreSQL: jobs wait in
 * pg-boss for `memfold worker` processes; a burst of appends makes one job; a worker killed mid-job leaves the job
 * to another worker, which finishes it; a compaction whose embedding call failed after the client's retries ends in the
 * dead-letter queue at once (no job retry on top) with nothing lost; a worker whose database connections are all terminated mid-job keeps serving (the job cut off fails
 * and its retry compacts); and a context that reached the window before any worker ran is compacted in the caller's turn.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueNames } from '../../src/background/pg-boss-queue.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import type { MemfoldEvent } from '../../src/memfold-options.js';
import { copyPgliteTemplate, createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { checkInvariants } from '../support/invariants.js';
import { orderChat } from '../support/messages.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
const WINDOW = 2_000;

function eventsOf(type: MemfoldEvent['type']) {
  const seen: MemfoldEvent[] = [];
  const waiters: Array<() => void> = [];
  return {
    seen,
    onEvent: (event: MemfoldEvent) => {
      if (event.type !== type) return;
      seen.push(event);
      for (const wake of waiters.splice(0)) wake();
    },
    next: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
}

describe('on PGlite: in the appending process', () => {
  it('an append past the trigger queues one job, which compacts; nothing is lost', async () => {
    const { root } = await copyPgliteTemplate();
    const ended = eventsOf('compaction_job_ended');
    const queued: MemfoldEvent[] = [];
    const memfold = await createMemfold({
      env: {},
      config: { home: root },
      compaction: { contextWindow: WINDOW, background: true },
      onEvent: (event) => {
        if (event.type === 'compaction_queued') queued.push(event);
        ended.onEvent(event);
      },
    });
    try {
      const appended: ConversationMessage[] = [];
      const done = ended.next();
      for (let turn = 0; turn < 30; turn++) appended.push(...(await memfold.append('c', orderChat(1, turn))));
      await done;
      expect(queued.length).toBeGreaterThan(0);
      expect(ended.seen[0]).toMatchObject({ type: 'compaction_job_ended', conversationId: 'c', status: 'compacted' });
      await memfold.close();
      const reopened = await createMemfold({ env: {}, config: { home: root }, compaction: { contextWindow: WINDOW } });
      expect((await checkInvariants(reopened, 'c', appended)).archived).toBeGreaterThan(0);
      await reopened.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

const serverUrl = postgresServerUrl();

describe.skipIf(serverUrl === undefined)('on PostgreSQL: jobs in pg-boss, run by workers', () => {
  let fake: FakeOpenAI;
  let database: { url: string; drop(): Promise<void> };
  let lanceRoot: string;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    database = await createPostgresTestDatabase(serverUrl!);
    ({ root: lanceRoot } = await copyPgliteTemplate());
  });
  afterAll(async () => {
    for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
    await fake.close();
    await database.drop();
    await rm(lanceRoot, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => ({
    MEMFOLD_DATABASE_URL: database.url,
    LANCEDB_URI: `${lanceRoot}/lancedb`,
    MEMFOLD_JOB_HEARTBEAT_SECONDS: '10',
    MEMFOLD_JOB_SUPERVISE_SECONDS: '1',
    ...extra,
  });

  function startWorker(extra: Record<string, string>): { process: ChildProcess; lines: string[] } {
    const child = spawn(process.execPath, [BIN, 'worker', '--concurrency', '1'], { env: { PATH: process.env.PATH ?? '', ...env(extra) } });
    const lines: string[] = [];
    child.stdout!.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    workers.push(child);
    return { process: child, lines };
  }

  async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('a burst of appends makes one job; a worker killed mid-job leaves it to another, which compacts once', async () => {
    const queued = eventsOf('compaction_queued');
    const app = await createMemfold({ env: env(), compaction: { contextWindow: WINDOW, background: true }, onEvent: queued.onEvent });
    const appended: ConversationMessage[] = [];
    for (let turn = 0; turn < 30; turn++) appended.push(...(await app.append('burst', orderChat(1, turn))));
    const results = queued.seen.map((e) => (e as { queued: boolean }).queued);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(results.length).toBeGreaterThan(1);

    // The first worker's summaries take 20 s: it is killed while the job runs.
    fake.setBehavior(behaviors.delay(20_000, behaviors.ok('Orders ORD-500 onwards were noted for Ada Lovelace.')));
    const slow = startWorker({ OPENAI_BASE_URL: fake.baseURL, MEMFOLD_SUMMARY_MODEL: 'slow-model', MEMFOLD_MODEL_MAX_RETRIES: '0' });
    await until(() => fake.requests.some((r) => r.path === '/v1/chat/completions'), 30_000, 'the first worker to call the model');
    slow.process.kill('SIGKILL');

    const second = startWorker({});
    await until(() => second.lines.some((line) => line.startsWith('compacted burst')), 60_000, 'the second worker to compact');
    expect(second.lines.find((line) => line.startsWith('compacted burst'))).toMatch(/attempt [2-9]/);
    second.process.kill('SIGTERM');
    await new Promise((resolve) => second.process.once('exit', resolve));

    // The killed worker's operation was rolled back; the retry committed one.
    const report = await checkInvariants(app, 'burst', appended);
    expect(report.archived).toBeGreaterThan(0);
    const operations = await app.persistence.listOperations('burst');
    expect(operations.filter((op) => op.status === 'committed' && op.kind === 'compaction')).toHaveLength(1);
    // The worker's commit brought the context under the trigger: the app's next append counts from the store and
    // queues nothing (a count kept from before the job would still be above the trigger).
    const before = queued.seen.length;
    await app.append('burst', orderChat(1, 100));
    expect(queued.seen.length).toBe(before);
    await app.close();
  });

  it('a compaction whose embedding call fails after the client retried it goes to the dead-letter queue at once, nothing lost', async () => {
    fake.setBehavior(behaviors.status(500));
    const embeddingRequests = () => fake.requests.filter((r) => r.path.endsWith('/embeddings')).length;
    const requestsBefore = embeddingRequests();
    // A database of its own: its archive is another one (made by another embedder), and a database has one archive.
    const doomedDatabase = await createPostgresTestDatabase(serverUrl!);
    const failing = {
      MEMFOLD_DATABASE_URL: doomedDatabase.url,
      LANCEDB_URI: `${lanceRoot}/lancedb-failing`,
      // A namespace of its own: its queue is created with this test's retry limit (a queue keeps the settings it was made with).
      MEMFOLD_NAMESPACE: 'doomed',
      OPENAI_BASE_URL: fake.baseURL,
      MEMFOLD_EMBEDDING_MODEL: 'broken-embedder',
      MEMFOLD_MODEL_MAX_RETRIES: '1',
      MEMFOLD_JOB_RETRIES: '2',
    };
    const app = await createMemfold({ env: env(failing), compaction: { contextWindow: WINDOW, background: true } });
    const appended = await app.append('doomed', orderChat(30));
    expect((await app.compact('doomed', { background: true })).conversationId).toBe('doomed');
    const worker = startWorker(failing);
    await until(() => worker.lines.some((line) => line.startsWith('failed doomed')), 60_000, 'a failed attempt');

    const boss = new PgBoss({ connectionString: doomedDatabase.url, schema: 'memfold_jobs', supervise: false, migrate: false });
    await boss.start();
    let dead: Array<{ data: unknown }> = [];
    await until(async () => (dead = await boss.fetch(queueNames('doomed').dead)).length > 0, 30_000, 'the dead letter');
    expect(dead[0]!.data).toMatchObject({ namespace: 'doomed', conversationId: 'doomed' });
    // One retry loop: the embedding client's two attempts, no job retry on top (2 job retries would make it 6).
    expect(worker.lines.filter((line) => line.startsWith('failed doomed'))).toHaveLength(1);
    expect(embeddingRequests() - requestsBefore).toBe(2);
    await boss.stop({ graceful: false });
    worker.process.kill('SIGTERM');

    expect((await app.persistence.loadHistory('doomed')).filter((m) => m.kind !== 'clip_archive')).toHaveLength(appended.length);
    expect(await app.persistence.listPendingOperations('doomed')).toEqual([]);
    await app.close();
    await doomedDatabase.drop();
  });

  it('a worker whose database connections are terminated mid-job keeps serving: all 8 jobs finish, SIGTERM exits 0', async () => {
    const own = {
      // A namespace (so a queue) of its own; the store's one archive (another would be refused).
      MEMFOLD_NAMESPACE: 'cut',
      OPENAI_BASE_URL: fake.baseURL,
      MEMFOLD_SUMMARY_MODEL: 'held-model',
      MEMFOLD_MODEL_MAX_RETRIES: '0',
    };
    fake.setBehavior(behaviors.ok('Orders ORD-500 onwards were noted for Ada Lovelace.'));
    const app = await createMemfold({ env: env(own), compaction: { contextWindow: WINDOW } });
    const ids = Array.from({ length: 8 }, (_, i) => `cut-${i}`);
    const appended = new Map<string, ConversationMessage[]>();
    for (const id of ids) appended.set(id, await app.append(id, orderChat(30)));
    for (const id of ids) expect(await app.compact(id, { background: true })).toMatchObject({ queued: true });

    const worker = startWorker(own);
    let stderr = '';
    worker.process.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const compacted = () => new Set(worker.lines.filter((line) => line.startsWith('compacted cut-')).map((line) => line.split(' ')[1]));
    await until(() => compacted().size >= 3, 60_000, 'three jobs to compact');
    // The next job waits on the model, holding its conversation's lock; then every session on the database ends.
    let release!: () => void;
    fake.setBehavior(behaviors.hold(new Promise<void>((resolve) => (release = resolve)), behaviors.ok('Orders were noted.')));
    await until(() => fake.inFlight > 0, 60_000, 'a job to call the model');
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const terminated = await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      );
      expect(terminated.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    release();

    await until(
      () => {
        if (worker.process.exitCode !== null) throw new Error(`the worker exited with ${worker.process.exitCode}: ${stderr}`);
        return compacted().size === ids.length;
      },
      120_000,
      'every job to compact',
    );
    // The job cut off failed naming the cause (its lock went with its connection), and its retry compacted.
    expect(worker.lines.find((line) => line.startsWith('failed cut-'))).toMatch(/the PostgreSQL connection was lost: terminating connection/);
    worker.process.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => worker.process.once('exit', (exitCode) => resolve(exitCode)));
    expect(code, stderr).toBe(0);
    for (const id of ids) expect((await checkInvariants(app, id, appended.get(id)!)).archived).toBeGreaterThan(0);
    await app.close();
  }, 180_000);

  it('a context that reached the window before any worker ran is compacted in the caller turn, offline', async () => {
    fake.setBehavior(behaviors.ok('unused'));
    const fallback = eventsOf('hard_window_fallback');
    const app = await createMemfold({ env: env(), compaction: { contextWindow: WINDOW, background: true }, onEvent: fallback.onEvent });
    await app.append('full', orderChat(40));
    expect((await app.usage('full')).tokens).toBeGreaterThanOrEqual(WINDOW);
    await app.context('full');
    expect(fallback.seen).toEqual([expect.objectContaining({ conversationId: 'full', status: 'compacted' })]);
    expect((await app.usage('full')).tokens).toBeLessThan(WINDOW);
    await app.close();
  });
});
