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
    async acquire(): Promise<void> {
      if (free > 0) {
        free--;
        return;
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
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

/**
 * Run `fn` holding a PostgreSQL session advisory lock. The lock lives on one pooled connection
 * held for the whole call (fn's own queries use other connections); unlocking in `finally`
 * returns the connection clean to the pool.
 */
export async function withAdvisoryLock<T>(db: Kysely<any>, key: string, wait: boolean, fn: () => Promise<T>): Promise<LockResult<T>> {
  return db.connection().execute(async (connection) => {
    const locked = await guard('take a conversation lock', async () => {
      if (wait) {
        await sql`select pg_advisory_lock(${key}::bigint)`.execute(connection);
        return true;
      }
      const result = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}::bigint) as locked`.execute(connection);
      return result.rows[0]?.locked === true;
    });
    if (!locked) return { acquired: false };
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
