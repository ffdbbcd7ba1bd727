/**
 * A conversation's lock held by someone who never lets go (a frozen process, a hung call) bounds its waiters: an
 * erase and a waiting compaction give up at `lockTimeoutMs` or when their `signal` aborts, say how long they waited
 * and who holds the lock, write nothing, and leave the lock usable once the holder lets go. On PGlite the holder is
 * in this process; on PostgreSQL also another connection holding the advisory lock, named by its backend pid.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { MemfoldError } from '../../src/errors.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { advisoryLockKey } from '../../src/persistence/kysely/kysely-conversation-lock.js';
import { markedTurns, openSqlStore, sqlBackendNames, type SqlStore } from './manage-fixtures.js';

/** A holder of `conversationId`'s lock in this process that lets go only when told. */
function holdLock(memfold: Memfold, conversationId: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const done = memfold.persistence.withConversationLock(
    conversationId,
    async () => {
      entered();
      await released;
    },
    { purpose: 'a frozen test holder' },
  );
  return {
    inside,
    async release() {
      release();
      await done;
    },
  };
}

/** A signal that aborts once the wait has begun (a few turns of the event loop after the call). */
function abortSoon(): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 20);
  return controller.signal;
}

async function rejection(promise: Promise<unknown>): Promise<MemfoldError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!MemfoldError.isInstance(error)) throw new Error(`expected a MemfoldError, got ${String(error)}`);
  return error;
}

describe.each(sqlBackendNames())('%s: waits for a conversation lock that is never released', (backend) => {
  let store: SqlStore;
  let memfold: Memfold;
  beforeAll(async () => {
    store = await openSqlStore(backend);
    const archive = createInMemoryArchive({ embedder: createHashingEmbedder(), namespace: 'default' });
    memfold = await createMemfold({ persistence: store.persistence, archive, env: {}, compaction: { contextWindow: 4_096 } });
  });
  afterAll(async () => {
    await memfold.close();
    await store.cleanup();
  });

  it('eraseConversation gives up when its signal aborts, naming the holder, and erases nothing', async () => {
    const id = `held-${randomUUID()}`;
    await memfold.append(id, markedTurns('lockwait', 2));
    const holder = holdLock(memfold, id);
    await holder.inside;
    const error = await rejection(memfold.eraseConversation(id, { signal: abortSoon() }));
    expect(error.code).toBe('busy');
    expect(error.message).toMatch(
      new RegExp(`^Conversation "${id}": waited \\d+ ms for the conversation's lock held by a frozen test holder in this process; the caller aborted`),
    );
    await holder.release();
    expect(await memfold.history(id)).toHaveLength(8);
    // The aborted waiter left the queue: the lock is free and the erase runs.
    expect((await memfold.eraseConversation(id)).status).toBe('erased');
  });

  it('eraseConversation gives up after lockTimeoutMs', async () => {
    const id = `held-${randomUUID()}`;
    const holder = holdLock(memfold, id);
    await holder.inside;
    const error = await rejection(memfold.eraseConversation(id, { lockTimeoutMs: 30 }));
    expect(error.message).toMatch(
      /waited \d+ ms for the conversation's lock held by a frozen test holder in this process; gave up after lockTimeoutMs \(30 ms\)/,
    );
    expect(error.details).toMatchObject({ conversationId: id, reason: 'lock_timeout' });
    await holder.release();
  });

  it('refuses a lockTimeoutMs a timer cannot keep, naming it', async () => {
    await expect(memfold.eraseConversation('x', { lockTimeoutMs: 2 ** 31 })).rejects.toThrow(/lockTimeoutMs: must be an integer from 0 to 2147483647 ms/);
  });

  it('compact({ wait: true }) ends busy at lockTimeoutMs, and aborted with its signal, saying what it waited for', async () => {
    const id = `held-${randomUUID()}`;
    await memfold.append(id, markedTurns('lockwait', 4));
    const holder = holdLock(memfold, id);
    await holder.inside;
    const timedOut = await memfold.compact(id, { force: true, wait: true, lockTimeoutMs: 30 });
    expect(timedOut).toMatchObject({ status: 'skipped', skipReason: 'busy' });
    expect(timedOut.error).toMatch(/waited \d+ ms for the conversation's lock held by a frozen test holder in this process; gave up after lockTimeoutMs/);
    const aborted = await memfold.compact(id, { force: true, wait: true, signal: abortSoon() });
    expect(aborted).toMatchObject({ status: 'failed', failureCode: 'aborted' });
    expect(aborted.error).toMatch(/held by a frozen test holder in this process; the caller aborted the wait/);
    await holder.release();
    expect((await memfold.compact(id, { force: true, wait: true })).status).toBe('compacted');
  });
});

describe.skipIf(!sqlBackendNames().includes('postgres'))('postgres: a lock held by another connection', () => {
  let store: SqlStore;
  let memfold: Memfold;
  let client: pg.Client;
  beforeAll(async () => {
    store = await openSqlStore('postgres');
    const archive = createInMemoryArchive({ embedder: createHashingEmbedder(), namespace: 'default' });
    memfold = await createMemfold({ persistence: store.persistence, archive, env: {}, compaction: { contextWindow: 4_096 } });
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(store.db);
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${rows[0]!.name}`;
    client = new pg.Client({ connectionString: url.toString(), application_name: 'frozen-holder' });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await memfold.close();
    await store.cleanup();
  });

  it('names the backend holding the advisory lock when an erase or a compaction gives up', async () => {
    const id = `held-${randomUUID()}`;
    await memfold.append(id, markedTurns('lockwait', 4));
    await client.query('select pg_advisory_lock($1::bigint)', [advisoryLockKey('default', id)]);
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const holderText = `held by PostgreSQL backend pid ${rows[0]!.pid} (application "frozen-holder", client 127.0.0.1`;
    const erase = await rejection(memfold.eraseConversation(id, { signal: abortSoon() }));
    expect(erase.message).toContain(holderText);
    expect(erase.message).toContain('the caller aborted the wait');
    const compact = await memfold.compact(id, { force: true, wait: true, lockTimeoutMs: 30 });
    expect(compact).toMatchObject({ status: 'skipped', skipReason: 'busy' });
    expect(compact.error).toContain(holderText);
    await client.query('select pg_advisory_unlock($1::bigint)', [advisoryLockKey('default', id)]);
    expect((await memfold.compact(id, { force: true, wait: true })).status).toBe('compacted');
    expect((await memfold.eraseConversation(id)).status).toBe('erased');
  });
});
