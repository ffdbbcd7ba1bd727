/**
 * Per-conversation locks: an in-process mutex (`../keyed-mutex.ts`, both backends) and, where the database can share
 * locks between processes (PostgreSQL), a session advisory lock on a dedicated connection.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { guard, toPersistenceError } from '../persistence-error.js';

/** What `withConversationLock` resolves to. */
export type LockResult<T> = { acquired: true; value: T } | { acquired: false };

/** At most `size` holders at once; the others wait in arrival order. */
export function createSemaphore(size: number) {
  let free = size;
  const waiters: Array<() => void> = [];
  return {
    /** Resolves true once a place is this caller's, or false when `signal` aborts first (nothing is then held). */
    acquire(signal?: AbortSignal): Promise<boolean> {
      if (free > 0) {
        free--;
        return Promise.resolve(true);
      }
      if (signal?.aborted) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const onAbort = () => {
          const at = waiters.indexOf(grant);
          if (at >= 0) waiters.splice(at, 1);
          resolve(false);
        };
        const grant = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        };
        waiters.push(grant);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    release(): void {
      const next = waiters.shift();
      if (next) next();
      else free++;
    },
  };
}

/** The signed 64-bit advisory-lock key of a conversation, as a decimal string (sent as `::bigint`). */
export function advisoryLockKey(namespace: string, conversationId: string): string {
  const digest = createHash('sha256').update(`memfold\u0000${namespace}\u0000${conversationId}`).digest();
  return digest.readBigInt64BE(0).toString();
}

/** How long one blocking attempt at a contended advisory lock lasts: how soon an aborted wait notices. */
const LOCK_ATTEMPT_MS = 250;

/** PostgreSQL's lock_not_available: `lock_timeout` ended an attempt. */
const LOCK_NOT_AVAILABLE = '55P03';

/** How a caller waits for an advisory lock: not at all, or until `wait.signal` aborts (`../lock-wait.ts`). */
export type AdvisoryWait = { wait: false } | { wait: true; signal: AbortSignal; remainingMs(): number };

/**
 * The backend holding advisory lock `key` in this database, as a waiter's error names it, e.g.
 * `PostgreSQL backend pid 4242 (application "worker", client 10.0.0.5, connected 2026-01-01T00:00:00.000Z)`.
 * A bigint key is stored as two oids: its high 32 bits in `classid`, its low 32 bits in `objid`.
 */
export async function advisoryLockHolder<DB>(connection: Kysely<DB>, key: string): Promise<string | undefined> {
  const value = BigInt(key);
  const high = BigInt.asUintN(32, value >> 32n).toString();
  const low = BigInt.asUintN(32, value).toString();
  const result = await sql<{ pid: number; application_name: string | null; client_addr: string | null; backend_start: Date | null }>`
    select l.pid, a.application_name, host(a.client_addr) as client_addr, a.backend_start
    from pg_locks l left join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.objsubid = 1 and l.classid = ${high}::oid and l.objid = ${low}::oid
      and l.database = (select oid from pg_database where datname = current_database())
    limit 1`.execute(connection);
  const row = result.rows[0];
  if (row === undefined) return undefined;
  const about = [
    row.application_name ? `application ${JSON.stringify(row.application_name)}` : undefined,
    row.client_addr ? `client ${row.client_addr}` : undefined,
    row.backend_start ? `connected ${new Date(row.backend_start).toISOString()}` : undefined,
  ].filter((part) => part !== undefined);
  return `PostgreSQL backend pid ${row.pid}${about.length > 0 ? ` (${about.join(', ')})` : ''}`;
}

/**
 * Take the advisory lock on `connection`, waiting in attempts of at most `LOCK_ATTEMPT_MS` (PostgreSQL's
 * `lock_timeout`, reset afterwards: the connection goes back to the pool) so an aborted wait stops within one attempt.
 * False when the wait aborted first.
 */
async function waitForAdvisoryLock<DB>(connection: Kysely<DB>, key: string, wait: Extract<AdvisoryWait, { wait: true }>): Promise<boolean> {
  const tried = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}::bigint) as locked`.execute(connection);
  if (tried.rows[0]?.locked === true) return true;
  try {
    while (!wait.signal.aborted) {
      const attemptMs = Math.max(1, Math.min(LOCK_ATTEMPT_MS, wait.remainingMs()));
      await sql`select set_config('lock_timeout', ${String(attemptMs)}, false)`.execute(connection);
      try {
        await sql`select pg_advisory_lock(${key}::bigint)`.execute(connection);
        return true;
      } catch (error) {
        if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
      }
    }
    return false;
  } finally {
    await sql`select set_config('lock_timeout', '0', false)`.execute(connection);
  }
}

/**
 * Run `fn` holding a PostgreSQL session advisory lock. The lock lives on one pooled connection
 * held for the whole call (fn's own queries use other connections); unlocking in `finally`
 * returns the connection clean to the pool. A wait that aborts resolves `{ acquired: false, holder }`.
 */
export async function withAdvisoryLock<T>(
  db: Kysely<any>,
  key: string,
  wait: AdvisoryWait,
  fn: () => Promise<T>,
): Promise<LockResult<T> | { acquired: false; holder: string | undefined }> {
  return db.connection().execute(async (connection) => {
    const locked = await guard('take a conversation lock', async () => {
      if (wait.wait) return waitForAdvisoryLock(connection, key, wait);
      const result = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}::bigint) as locked`.execute(connection);
      return result.rows[0]?.locked === true;
    });
    if (!locked) {
      if (!wait.wait) return { acquired: false };
      return { acquired: false, holder: await advisoryLockHolder(connection, key).catch(() => undefined) };
    }
    let failed = false;
    try {
      return { acquired: true, value: await fn() };
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      try {
        await sql`select pg_advisory_unlock(${key}::bigint)`.execute(connection);
      } catch (unlockError) {
        // fn's own error matters more; a broken connection drops its session locks anyway.
        // biome-ignore lint/correctness/noUnsafeFinally: an unlock failure is the call's error only when fn succeeded
        if (!failed) throw toPersistenceError(unlockError, 'release a conversation lock');
      }
    }
  });
}
