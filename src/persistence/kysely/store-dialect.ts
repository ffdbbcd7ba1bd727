/** What a backend folder hands the Kysely store: a dialect, its capabilities, and how to shut it down. */
import type { Dialect } from 'kysely';

export interface StoreDialect {
  readonly backend: 'postgres' | 'pglite';
  readonly dialect: Dialect;
  /**
   * Whether session advisory locks exclude other processes, so `withConversationLock` takes one.
   * Default `false`: the in-process mutex alone guards a conversation.
   */
  readonly advisoryLocks?: boolean;
  /**
   * Connections in the pool. A held advisory lock keeps one of them for the whole compaction, so the
   * store lets at most this many minus two hold locks at once: the work under the locks always finds a
   * connection. Required with `advisoryLocks`.
   */
  readonly poolSize?: number;
  /**
   * Take a pooled connection for a session that outlives a query (the advisory lock's), with its server pid and a
   * signal that aborts when the connection is lost. Required with `advisoryLocks`.
   */
  readonly reserveSession?: () => Promise<ReservedSession>;
  /**
   * Whether the pool has a single connection, so calling the store (not the `tx` handle) inside
   * `transaction()` would wait forever; the store refuses such calls. Default `false`.
   */
  readonly singleConnection?: boolean;
  /** Release what the dialect owns beyond the pool (Kysely's `destroy()` ends the pool first). */
  close(): Promise<void>;
}

/** A pooled connection held for a whole session (the conversation lock's). */
export interface ReservedSession {
  /** The server process of the session (`pg_backend_pid()`). */
  readonly pid: number;
  /** The server's `idle_session_timeout` for this session in ms (0: none). */
  readonly idleTimeoutMs: number;
  /** Aborted, with a ConnectionLostError naming the cause, when the connection is lost: the session and its locks are gone. */
  readonly lost: AbortSignal;
  query<R>(sql: string, parameters?: readonly unknown[]): Promise<R[]>;
  /** Give the connection back; `destroy` (or a lost connection) discards it. */
  release(destroy?: boolean): void;
}
