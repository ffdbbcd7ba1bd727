/**
 * The persistence port: the `PersistenceProvider` interface here, its types by what they describe in
 * `persistence-operations.ts` (the operation journal, commits), `persistence-transaction.ts` (the work inside one
 * transaction) and `persistence-records.ts` (the per-conversation records, the archive binding, migrations, erasure).
 * Every type is exported from here too, so the port is imported from one path.
 */
import type { LockWaitOptions } from './lock-wait.js';
import type { CompactionOperation, OperationRecordInput } from './persistence-operations.js';
import type {
  ArchiveBinding,
  ArchiveBindingDecision,
  ConversationErasure,
  ConversationSettingsRecord,
  EraseConversationOptions,
  LoopGuardState,
  LoopGuardUpdate,
  MigrationReport,
  TokenCalibration,
  TokenCalibrationUpdate,
} from './persistence-records.js';
import type { PersistenceTransaction } from './persistence-transaction.js';

export type {
  ClearedOutput,
  CommitClearing,
  CommitCompaction,
  CommitReport,
  CompactionMode,
  CompactionOperation,
  OperationKind,
  OperationRecordInput,
  OperationStatus,
  OperationUsage,
} from './persistence-operations.js';
export type {
  ArchiveBinding,
  ArchiveBindingDecision,
  ConversationErasure,
  ConversationSettingsRecord,
  EraseConversationOptions,
  LoopGuardState,
  LoopGuardUpdate,
  MigrationReport,
  TokenCalibration,
  TokenCalibrationUpdate,
} from './persistence-records.js';
export type { CountLiveOptions, LiveCounts, LoadHistoryOptions, PersistenceTransaction, UsedId } from './persistence-transaction.js';

/**
 * The live message table. Messages come back in `seq` order, the clip-archive row (seq 0) first.
 */
export interface PersistenceProvider extends PersistenceTransaction {
  /** Which backend: shown in CLI output and test names. */
  readonly backend: 'postgres' | 'pglite' | 'memory';
  /** Apply pending migrations in order, recording each; safe to call again. Called on open. */
  migrate(): Promise<MigrationReport>;
  /** Run `fn` in one transaction: everything it writes commits together or not at all. */
  transaction<T>(fn: (tx: PersistenceTransaction) => Promise<T>): Promise<T>;
  /**
   * Run `fn` holding the conversation's lock. Resolves `{ acquired: false }` at once when another
   * holder has it and `wait` is false (default). With `wait`, waits at most `timeoutMs` (default
   * `DEFAULT_LOCK_WAIT_MS`, 60,000) or until `signal` aborts, then rejects with a `busy` MemfoldError naming the
   * conversation, the milliseconds waited and the holder (`purpose` of a holder in this process; a PostgreSQL
   * backend's pid, application and client for one elsewhere): `lock-wait.ts`. Neither bounds `fn` once it runs.
   */
  withConversationLock<T>(conversationId: string, fn: () => Promise<T>, options?: LockWaitOptions): Promise<{ acquired: true; value: T } | { acquired: false }>;
  /**
   * Insert or update an operation row (status, ids, labels, error). A status other than `committed` also clears the
   * marks the operation made (overlay rows come back live), in the same transaction: rows are marked exactly while
   * their operation is committed. Refuses (`operation.mode`) a mode other than the recorded one.
   */
  recordOperation(operation: OperationRecordInput): Promise<void>;
  /**
   * Move a recorded operation on: its status and labels only (its message ids stay those of its first
   * record, so a journal entry per write costs the labels, not the covered ids). Refuses an id that is
   * not an operation of this conversation.
   */
  updateOperation(update: Pick<CompactionOperation, 'id' | 'conversationId' | 'status' | 'labels'>): Promise<void>;
  listOperations(conversationId: string): Promise<CompactionOperation[]>;
  /**
   * Operations still `planned` or `archived` (a compaction running now, or one a crash cut short),
   * oldest first: of one conversation, or of the whole namespace when no id is given.
   */
  listPendingOperations(conversationId?: string): Promise<CompactionOperation[]>;
  /** The namespace's conversations, most recently updated first; `messageCount` counts live messages (no clip-archive, no overlay rows). */
  listConversations(): Promise<Array<{ id: string; messageCount: number; updatedAt: string }>>;
  /**
   * Delete, in one transaction, every row the live store keeps of the conversation: its messages (overlay rows and the
   * clip-archive too), id ledger, loop guard record, token calibration, every operation journal row (with the usage
   * commits recorded on them, and a pending `erase` operation) and the conversation row. With `throughSeq`, messages
   * after it (appended after the erase was asked for) stay, with their id ledger entries and the conversation row (its
   * seqs go on), but for tool results answering a call at or below it, which go with their call. The archive is not
   * touched: the erase (`erase-export/erase-conversation.ts`) purges it first. A conversation with nothing stored deletes
   * nothing (every count 0). Refuses an empty id (`conversationId`) and a `throughSeq` that is not an integer >= 0.
   */
  eraseConversation(conversationId: string, options?: EraseConversationOptions): Promise<ConversationErasure>;
  /** The conversation's loop guard record, or undefined when it has no streak. */
  getLoopGuardState(conversationId: string): Promise<LoopGuardState | undefined>;
  /**
   * Write the conversation's loop guard record and return it as stored. `pausedAt` keeps its first time while
   * `paused` stays true. Refuses (`InvalidArgumentError` naming the field) a bad update, and a conversation nothing
   * was ever appended to (`conversationId`).
   */
  setLoopGuardState(conversationId: string, update: LoopGuardUpdate): Promise<LoopGuardState>;
  /** Remove the conversation's loop guard record (its streak and pause); true when there was one. */
  clearLoopGuardState(conversationId: string): Promise<boolean>;
  /** The conversation's token calibration, or undefined when none was observed since its last compaction (factor 1). */
  getTokenCalibration(conversationId: string): Promise<TokenCalibration | undefined>;
  /**
   * Write the conversation's token calibration (replacing the one before) and return it as stored. Refuses
   * (`InvalidArgumentError` naming the field) a bad update, and a conversation nothing was ever appended to
   * (`conversationId`).
   */
  setTokenCalibration(conversationId: string, update: TokenCalibrationUpdate): Promise<TokenCalibration>;
  /** The conversation's stored settings overrides, or undefined when none are stored. Needs no conversation row. */
  getConversationSettings(conversationId: string): Promise<ConversationSettingsRecord | undefined>;
  /**
   * Store the conversation's settings overrides, replacing those before, and return them as stored (`updatedAt` from
   * the store's clock). A conversation need not have messages. Refuses (`InvalidArgumentError`) a bad id
   * (`conversationId`) and settings that are not a plain object of JSON values of at most 64 KiB (`settings`).
   */
  setConversationSettings(conversationId: string, settings: Record<string, unknown>): Promise<ConversationSettingsRecord>;
  /** Remove the conversation's stored settings overrides; true when there were some. */
  clearConversationSettings(conversationId: string): Promise<boolean>;
  /**
   * Reserve a start slot of the rate limit `key`, shared by every process on this database
   * (`migrations/010_rate_slots.sql`): the next start is `intervalMs` after the previous reservation's, or now when
   * that has passed, by the database's clock. Returns the ms the caller must wait before starting (0 or more), counted
   * from when it resolves (the time since the statement was sent is taken off, so a late answer is no late start). One
   * statement, so concurrent reservations never get the same slot. Optional: the Kysely store has it (PostgreSQL and
   * PGlite); the in-memory store does not. Refuses an empty `key` and an `intervalMs` that is not a positive number.
   */
  reserveRateSlot?(key: string, intervalMs: number): Promise<number>;
  /**
   * The archive this store belongs to (`migrations/012_archive_binding.sql`), or undefined before one is recorded.
   * Optional, with `bindArchive`: the Kysely store has both (PostgreSQL and PGlite); the in-memory store, whose
   * archive lives and dies with it, has neither.
   */
  getArchiveBinding?(): Promise<ArchiveBinding | undefined>;
  /**
   * Decide the store's archive binding, one process at a time (a lock across processes): `decide` gets the binding
   * recorded now and returns the one to record (undefined: keep it), or throws to refuse; returns the binding recorded
   * afterwards. `decide` may take its time (it reads or marks the archive) but must not call the store. Refuses an
   * empty `location` or `archiveId` (`binding.location`, `binding.archiveId`).
   */
  bindArchive?(decide: ArchiveBindingDecision): Promise<ArchiveBinding | undefined>;
  close(): Promise<void>;
}
