/**
 * A lost PostgreSQL connection fails the operation in flight, never the host process: connections terminated
 * (`pg_terminate_backend`) during a transaction, during appends and during a compaction, and sessions the server ends
 * on `idle_session_timeout` or `idle_in_transaction_session_timeout`. Each operation rejects (or the compaction
 * fails) with `persistence_error` naming the cause, every acknowledged message stays live or archived, and the next
 * call gets a fresh connection. Every wait is on the server's state (pg_stat_activity), released by the test; the
 * summarizer answers only when the test lets it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import { createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { orderChat } from '../support/messages.js';

const serverUrl = postgresServerUrl();

/** Gates still closed when a test ends (a failed assertion): opened before the store closes, so close never waits on them. */
const closedGates = new Set<() => void>();

/** A summarizer that answers only after `open()`; `entered` resolves at its first call. */
function gatedSummarizer() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  closedGates.add(open);
  let enter!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const summarizer: Summarizer = {
    id: 'gated',
    contextWindow: 128_000,
    async summarize() {
      enter();
      await gate;
      return { text: 'Orders ORD-500 onwards were noted for Ada Lovelace.', usage: { inputTokens: 10, outputTokens: 10 }, model: 'gated' };
    },
  };
  return { summarizer, entered, open };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

interface Backend {
  pid: number;
  state: string | null;
  wait_event_type: string | null;
  query: string;
}

describe.skipIf(serverUrl === undefined)('PostgreSQL: a lost connection fails the operation, never the process', () => {
  let database: { url: string; drop(): Promise<void> };
  let admin: pg.Client;
  let lanceRoot: string;
  let memfold: Memfold | undefined;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => void uncaught.push(error);

  beforeAll(async () => {
    lanceRoot = await mkdtemp(path.join(os.tmpdir(), 'memfold-conn-loss-'));
    process.on('uncaughtException', onUncaught);
  });
  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await rm(lanceRoot, { recursive: true, force: true });
  });
  beforeEach(async () => {
    uncaught.length = 0;
    database = await createPostgresTestDatabase(serverUrl!);
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    // The test's own session must outlive the timeouts it sets on the database.
    await admin.query(`set idle_session_timeout = 0`);
  });
  afterEach(async () => {
    for (const open of closedGates) open();
    closedGates.clear();
    await memfold?.close().catch(() => undefined);
    memfold = undefined;
    await admin.end();
    await database.drop();
    expect(uncaught, 'uncaught exceptions in the host process').toEqual([]);
  });

  /** Set a server setting for the sessions memfold opens from now on. */
  async function alterDatabase(setting: string, value: string): Promise<void> {
    await admin.query(`alter database ${new URL(database.url).pathname.slice(1)} set ${setting} = '${value}'`);
  }

  async function open(summarizer?: Summarizer): Promise<Memfold> {
    memfold = await createMemfold({
      env: {},
      config: { databaseUrl: database.url, lancedbUri: await mkdtemp(path.join(lanceRoot, 'l-')) },
      ...(summarizer ? { summarizer } : {}),
      compaction: { contextWindow: 2_000 },
    });
    return memfold;
  }

  /** memfold's sessions on the test database (every client backend but the test's own). */
  async function backends(): Promise<Backend[]> {
    const result = await admin.query<Backend>(
      `select pid, state, wait_event_type, query from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
    );
    return result.rows;
  }

  /** Poll the server's state until `check` holds (bounded: a failing fix fails here rather than hanging). */
  async function until(check: (sessions: Backend[]) => boolean, what: string): Promise<void> {
    let sessions: Backend[] = [];
    for (let attempt = 0; attempt < 1_000; attempt++) {
      sessions = await backends();
      if (check(sessions)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`timed out waiting for ${what}; the sessions: ${JSON.stringify(sessions)}`);
  }

  /** End every memfold session, as an administrator would, and wait until the server has. */
  async function terminateAll(): Promise<number> {
    const result = await admin.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
    );
    await until((sessions) => sessions.length === 0, 'the terminated sessions to end');
    return result.rowCount ?? 0;
  }

  const LOST = /the PostgreSQL connection was lost: terminating connection due to administrator command/;

  it('a transaction whose connection is terminated rejects with persistence_error naming the cause; the next call works', async () => {
    const mf = await open();
    const appended = await mf.append('t', orderChat(2));
    const inside = deferred();
    const proceed = deferred();
    const transaction = mf.persistence.transaction(async (tx) => {
      await tx.append('t', orderChat(1, 10));
      inside.resolve();
      await proceed.promise;
      await tx.append('t', orderChat(1, 11));
    });
    await inside.promise;
    expect(await terminateAll()).toBeGreaterThan(0);
    proceed.resolve();
    const error = await transaction.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'persistence_error', retryable: true });
    expect((error as Error).message).toMatch(LOST);
    // The transaction rolled back; what was acknowledged before it stays, and the next call gets a new connection.
    appended.push(...(await mf.append('t', orderChat(1, 20))));
    expect((await mf.history('t')).map((m) => m.id)).toEqual(appended.map((m) => m.id));
  });

  it('appends waiting inside their transactions when their connections are terminated reject; every acknowledged message stays', async () => {
    const mf = await open();
    // Six conversations (appends to one conversation take turns in the process), two messages acknowledged in each.
    const ids = Array.from({ length: 6 }, (_, i) => `a${i}`);
    const appended = new Map<string, ConversationMessage[]>();
    for (const id of ids) appended.set(id, await mf.append(id, orderChat(1)));
    // Hold the conversation rows, so the appends wait inside their transactions (on the row locks). From a session of
    // its own: inside a transaction, pg_stat_activity would show the admin session one snapshot.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    const table = await holder.query<{ name: string }>(
      `select format('%I.%I', schemaname, tablename) as name from pg_tables where tablename = 'conversations'`,
    );
    await holder.query('begin');
    await holder.query(`select 1 from ${table.rows[0]!.name} where id = any($1::text[]) for update`, [ids]);
    const appends = Promise.allSettled(ids.map((id, i) => mf.append(id, orderChat(1, 10 + i))));
    await until((sessions) => sessions.filter((s) => s.wait_event_type === 'Lock').length === ids.length, 'the appends to wait on the row locks');
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`);
    await until((sessions) => sessions.every((s) => s.wait_event_type !== 'Lock'), 'the terminated sessions to end');
    await holder.end();
    for (const outcome of await appends) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason as Error;
      expect(reason).toMatchObject({ code: 'persistence_error', retryable: true });
      expect(reason.message).toMatch(/append to conversation "a\d": the PostgreSQL connection was lost: terminating connection due to administrator command/);
    }
    for (const id of ids) {
      appended.get(id)!.push(...(await mf.append(id, orderChat(1, 30))));
      await checkInvariants(mf, id, appended.get(id)!);
    }
  });

  it('a compaction whose lock connection is terminated while it summarizes fails at its commit, commits nothing, loses nothing', async () => {
    const gated = gatedSummarizer();
    const mf = await open(gated.summarizer);
    const appended = await mf.append('c', orderChat(20));
    const running = mf.compact('c', { force: true });
    await gated.entered;
    // Only the session holding the conversation's advisory lock: the compaction's other queries go on unharmed.
    const holder = await admin.query<{ pid: number }>(
      `select pid from pg_locks where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`,
    );
    expect(holder.rows).toHaveLength(1);
    await admin.query('select pg_terminate_backend($1)', [holder.rows[0]!.pid]);
    await until((sessions) => !sessions.some((s) => s.pid === holder.rows[0]!.pid), 'the lock session to end');
    gated.open();
    const result = await running;
    // The lock went with its connection: another process could hold it now, so the commit refuses.
    expect(result.status).toBe('failed');
    expect(result.failureCode, result.error).toBe('commit_failed');
    expect(result.error).toMatch(/The lock on conversation "c" was lost \(the PostgreSQL connection was lost: terminating connection due to administrator/);
    expect((await checkInvariants(mf, 'c', appended)).archived).toBe(0);

    const again = await mf.compact('c', { force: true });
    expect(again.status, again.error).toBe('compacted');
    expect((await checkInvariants(mf, 'c', appended)).archived).toBeGreaterThan(0);
  });

  it('a compaction whose connections are all terminated while it summarizes fails naming the lost connection, loses nothing', async () => {
    const gated = gatedSummarizer();
    const mf = await open(gated.summarizer);
    const appended = await mf.append('c', orderChat(20));
    const running = mf.compact('c', { force: true });
    await gated.entered;
    await terminateAll();
    gated.open();
    const result = await running;
    // Whichever query noticed first (a journal write beside the fold, or the commit's lock check) names the cause.
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(LOST);
    expect((await checkInvariants(mf, 'c', appended)).archived).toBe(0);
    const again = await mf.compact('c', { force: true });
    expect(again.status, again.error).toBe('compacted');
  });

  it('idle_session_timeout: a compaction that outlasts it keeps its lock and commits; the idle connections it ends are replaced', async () => {
    await alterDatabase('idle_session_timeout', '1s');
    const gated = gatedSummarizer();
    const mf = await open(gated.summarizer);
    const appended = await mf.append('c', orderChat(20));
    const running = mf.compact('c', { force: true });
    await gated.entered;
    // The server ends every idle pooled connection; the lock's session, kept alive, is the one left.
    await until((sessions) => sessions.length === 1 && /pg_advisory_lock|select 1/.test(sessions[0]!.query), 'the server to end the idle connections');
    gated.open();
    const result = await running;
    expect(result.status, result.error).toBe('compacted');
    appended.push(...(await mf.append('c', orderChat(1, 40))));
    expect((await checkInvariants(mf, 'c', appended)).archived).toBeGreaterThan(0);
  });

  it('idle_in_transaction_session_timeout: a transaction left idle past it rejects with persistence_error naming it', async () => {
    await alterDatabase('idle_in_transaction_session_timeout', '1s');
    const mf = await open();
    const appended = await mf.append('t', orderChat(2));
    const inside = deferred();
    const proceed = deferred();
    const transaction = mf.persistence.transaction(async (tx) => {
      await tx.append('t', orderChat(1, 10));
      inside.resolve();
      await proceed.promise;
      await tx.append('t', orderChat(1, 11));
    });
    await inside.promise;
    await until((sessions) => sessions.some((s) => s.state === 'idle in transaction'), 'the transaction to sit idle');
    await until((sessions) => !sessions.some((s) => s.state === 'idle in transaction'), 'the server to end it');
    proceed.resolve();
    const error = await transaction.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'persistence_error', retryable: true });
    expect((error as Error).message).toMatch(/the PostgreSQL connection was lost: terminating connection due to idle-in-transaction timeout/);
    appended.push(...(await mf.append('t', orderChat(1, 20))));
    expect((await mf.history('t')).map((m) => m.id)).toEqual(appended.map((m) => m.id));
  });
});
