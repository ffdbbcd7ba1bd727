/**
 * Per-conversation locks: an in-process mutex (`../keyed-mutex.ts`, both backends) and, where the database can share
 * locks between processes (PostgreSQL), a session advisory lock on a dedicated connection.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { MemfoldError, errorMessage } from '../../errors.js';
import { guard, toPersistenceError } from '../persistence-error.js';
import type { Database } from './kysely-schema.js';
import type { ReservedSession } from './store-dialect.js';

/** What `withConversationLock` resolves to. */
export type LockResult<T> = { acquired: true; value: T } | { acquired: false };

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
export async function advisoryLockHolder(session: ReservedSession, key: string): Promise<string | undefined> {
  const value = BigInt(key);
  const high = BigInt.asUintN(32, value >> 32n).toString();
  const low = BigInt.asUintN(32, value).toString();
  const rows = await session.query<{ pid: number; application_name: string | null; client_addr: string | null; backend_start: Date | null }>(
    `select l.pid, a.application_name, host(a.client_addr) as client_addr, a.backend_start
     from pg_locks l left join pg_stat_activity a on a.pid = l.pid
     where l.locktype = 'advisory' and l.granted and l.objsubid = 1 and l.classid = $1::oid and l.objid = $2::oid
       and l.database = (select oid from pg_database where datname = current_database())
     limit 1`,
    [high, low],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const about = [
    row.application_name ? `application ${JSON.stringify(row.application_name)}` : undefined,
    row.client_addr ? `client ${row.client_addr}` : undefined,
    row.backend_start ? `connected ${new Date(row.backend_start).toISOString()}` : undefined,
  ].filter((part) => part !== undefined);
  return `PostgreSQL backend pid ${row.pid}${about.length > 0 ? ` (${about.join(', ')})` : ''}`;
}

/**
 * Take the advisory lock on `session`, waiting in attempts of at most `LOCK_ATTEMPT_MS` (PostgreSQL's
 * `lock_timeout`, reset afterwards: the connection goes back to the pool) so an aborted wait stops within one attempt.
 * False when the wait aborted first.
 */
async function waitForAdvisoryLock(session: ReservedSession, key: string, wait: Extract<AdvisoryWait, { wait: true }>): Promise<boolean> {
  const tried = await session.query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [key]);
  if (tried[0]?.locked === true) return true;
  try {
    while (!wait.signal.aborted) {
      const attemptMs = Math.max(1, Math.min(LOCK_ATTEMPT_MS, wait.remainingMs()));
      await session.query(`select set_config('lock_timeout', $1, false)`, [String(attemptMs)]);
      try {
        await session.query('select pg_advisory_lock($1::bigint)', [key]);
        return true;
      } catch (error) {
        if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
      }
    }
    return false;
  } finally {
    if (!session.lost.aborted) await session.query(`select set_config('lock_timeout', '0', false)`);
  }
}

/** A conversation lock this async context holds on PostgreSQL: what a commit under it checks. */
export interface HeldLock {
  readonly conversationId: string;
  /** The advisory-lock key (`advisoryLockKey`). */
  readonly key: string;
  /** The server process of the session holding it. */
  readonly pid: number;
  /** Aborted, with the cause, when that session's connection is lost (and the lock with it). */
  readonly lost: AbortSignal;
}

/**
 * Keep an idle session alive under the server's `idle_session_timeout`: a compaction holds its lock for as long as
 * its summaries take, and the server would otherwise end the session (and free the lock) meanwhile.
 */
function keepAlive(session: ReservedSession): { stop(): Promise<void> } {
  if (!(session.idleTimeoutMs > 0)) return { stop: async () => {} };
  let ping: Promise<unknown> = Promise.resolve();
  const timer = setInterval(
    () => {
      // One query at a time on the session; a failed ping is a lost connection, which `lost` reports.
      ping = ping.then(() => session.query('select 1')).catch(() => undefined);
    },
    Math.max(50, Math.floor(session.idleTimeoutMs / 3)),
  );
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await ping;
    },
  };
}

/**
 * Run `fn` holding a PostgreSQL session advisory lock. The lock lives on a reserved connection held for the whole
 * call (fn's own queries use other connections); unlocking in `finally` returns the connection clean to the pool.
 * A wait that aborts resolves `{ acquired: false, holder }`.
 * When that connection is lost the lock is gone with it: `held.lost` aborts, and a commit under the lock refuses
 * (`requireLockHeld`), so the caller fails instead of committing unlocked.
 */
export async function withAdvisoryLock<T>(
  session: ReservedSession,
  lock: { conversationId: string; key: string; wait: AdvisoryWait },
  fn: (held: HeldLock) => Promise<T>,
): Promise<LockResult<T> | { acquired: false; holder: string | undefined }> {
  const { key, wait } = lock;
  let destroy = false;
  try {
    const locked = await guard('take a conversation lock', async () => {
      if (wait.wait) return waitForAdvisoryLock(session, key, wait);
      const rows = await session.query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [key]);
      return rows[0]?.locked === true;
    });
    if (!locked) {
      if (!wait.wait) return { acquired: false };
      return { acquired: false, holder: await advisoryLockHolder(session, key).catch(() => undefined) };
    }
    const alive = keepAlive(session);
    let failed = false;
    try {
      return { acquired: true, value: await fn({ conversationId: lock.conversationId, key, pid: session.pid, lost: session.lost }) };
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      await alive.stop();
      // A lost connection took its session's locks with it: there is nothing to unlock.
      if (!session.lost.aborted) {
        try {
          await session.query('select pg_advisory_unlock($1::bigint)', [key]);
        } catch (unlockError) {
          // The lock may still be held: the connection must not go back to the pool with it.
          destroy = true;
          // fn's own error matters more; a lost connection dropped its locks anyway.
          // biome-ignore lint/correctness/noUnsafeFinally: an unlock failure is the call's error only when fn succeeded
          if (!failed && !session.lost.aborted) throw toPersistenceError(unlockError, 'release a conversation lock');
        }
      }
    }
  } finally {
    session.release(destroy);
  }
}

/**
 * Refuse, inside a commit's transaction, when the conversation's lock this context took is no longer held: its
 * connection was lost, so another process may hold the lock now. Checked on the server (`pg_locks`), so a session
 * that ended before its client heard of it counts as lost too. A bigint advisory key shows as its high half in
 * `classid`, its low half in `objid`, with `objsubid` 1.
 */
export async function requireLockHeld(trx: Kysely<Database>, held: HeldLock | undefined): Promise<void> {
  if (held === undefined) return;
  if (!held.lost.aborted) {
    const unsigned = BigInt.asUintN(64, BigInt(held.key));
    const result = await sql<{ held: boolean }>`select exists (
        select 1 from pg_locks
        where locktype = 'advisory' and granted and pid = ${held.pid} and objsubid = 1
          and classid = ${(unsigned >> 32n).toString()}::bigint::oid and objid = ${(unsigned & 0xffffffffn).toString()}::bigint::oid
      ) as held`.execute(trx);
    if (result.rows[0]?.held === true) return;
  }
  const cause = held.lost.aborted ? errorMessage(held.lost.reason) : `its session (pid ${held.pid}) ended`;
  throw new MemfoldError(
    'persistence_error',
    `The lock on conversation ${JSON.stringify(held.conversationId)} was lost (${cause}): another process may hold it now, so nothing was committed; compact again`,
    { cause: held.lost.aborted ? held.lost.reason : undefined, retryable: true, details: { reason: 'connection_lost' } },
  );
}
