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
   * Whether the pool has a single connection, so calling the store (not the `tx` handle) inside
   * `transaction()` would wait forever; the store refuses such calls. Default `false`.
   */
  readonly singleConnection?: boolean;
  /** Release what the dialect owns beyond the pool (Kysely's `destroy()` ends the pool first). */
  close(): Promise<void>;
}
