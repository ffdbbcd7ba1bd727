import type { ConversationMessage, NewMessage } from '../conversation/types.js';
import type { LockWaitOptions } from './lock-wait.js';

/** The archive a live store belongs to, as the first process that opened them together recorded it. */
export interface ArchiveBinding {
  /** Where that process found the archive: an absolute folder, or the object-store URI. */
  location: string;
  /** The id the archive keeps inside itself; what is compared. */
  archiveId: string;
  boundAt: Date;
}

/** What `bindArchive` asks: given the binding recorded now, the one to record (undefined: keep it). */
export type ArchiveBindingDecision = (bound: ArchiveBinding | undefined) => Promise<{ location: string; archiveId: string } | undefined>;

export interface MigrationReport {
  /** Names of the migrations this call applied, in order (empty when up to date). */
  applied: string[];
  /** Every migration recorded as applied after the call. */
  current: string[];
}

export type OperationStatus = 'planned' | 'archived' | 'committed' | 'rolled_back';

/**
 * How a compaction's commit takes the archived messages out of the live history. `delete`: the rows are deleted.
 * `overlay`: the rows stay, marked compacted by the operation (`ConversationMessage.compactedBy` when read with
 * `includeCompacted`); the live history leaves them out. Either way the archive holds them verbatim.
 */
export type CompactionMode = 'delete' | 'overlay';

/**
 * What an operation does (`migrations/006_operation_kind.sql`): `compaction` archives messages and deletes them from
 * the live table; `clear_tool_outputs` archives tool outputs verbatim and replaces each live row's text by a placeholder;
 * `erase` (`migrations/009_erase_operation.sql`) removes the whole conversation: recorded before anything is removed,
 * deleted by `eraseConversation` with the rest, and finished (never undone) by reconcile when a crash cut it short.
 */
export type OperationKind = 'compaction' | 'clear_tool_outputs' | 'erase';

/** A row of the compaction operations table. */
export interface CompactionOperation {
  id: string;
  conversationId: string;
  /** Default `compaction` when recorded without one; always set when read. */
  kind?: OperationKind;
  status: OperationStatus;
  /**
   * How its commit takes the messages out of the live history, fixed by the operation's first record: whichever
   * process finishes it (reconcile, with other settings) commits it this way. Rows from before overlay mode: `delete`.
   */
  mode: CompactionMode;
  messageIds: string[];
  labels: string[];
  error?: string;
  /** What its summarizer calls took, as its commit recorded it (`CommitCompaction.usage`); absent when none was given. */
  usage?: OperationUsage;
  /**
   * An `erase`'s boundary, set by the store when the erase is first recorded: the conversation's last seq then (0 when
   * it had none; `migrations/013_erase_boundary.sql`). The erase removes messages up to it and keeps the ones appended
   * after. Absent on other kinds, and on an erase recorded before that migration (which removes every message).
   */
  eraseThroughSeq?: number;
  createdAt: string;
  updatedAt: string;
}

/** What a compaction's summarizer calls took: per model that answered, and what they cost then (null: a model had no price). */
export interface OperationUsage {
  byModel: Record<string, { calls: number; inputTokens: number; outputTokens: number }>;
  costUsd: number | null;
}

/**
 * What `recordOperation` writes. `mode` defaults to `delete` on the first record; a later record may omit it (the
 * recorded mode stays) but may not change it.
 */
export type OperationRecordInput = Omit<CompactionOperation, 'createdAt' | 'updatedAt' | 'mode' | 'usage' | 'eraseThroughSeq'> & { mode?: CompactionMode };

/**
 * The writes a compaction commits at once. The commit also drops the conversation's token calibration (the
 * context it was measured on is gone), in the same transaction.
 */
export interface CommitCompaction {
  conversationId: string;
  operationId: string;
  /** Exactly the archived message ids: deleted, or in `overlay` mode marked compacted by the operation. Each must be live. */
  deleteIds: string[];
  /** The new clip-archive text; replaces the previous clip-archive row. */
  clipArchive: string;
  labels: string[];
  /**
   * The mode the operation was recorded with (default `delete`); a commit in another mode is refused (`commit.mode`),
   * writing nothing.
   */
  mode?: CompactionMode;
  /**
   * What the compaction's summarizer calls took, kept on the operation row (migration 008), so a conversation's cost
   * can be summed later (`inspect`). Default none (reconcile, which finishes a compaction it did not run).
   */
  usage?: OperationUsage;
}

export interface CommitReport {
  /** Rows deleted (`delete` mode). */
  deleted: number;
  /** Rows marked compacted (`overlay` mode). */
  marked: number;
  clipArchive: ConversationMessage;
}

export interface CountLiveOptions {
  /** Count only the rows a tier-2 clearing gave a placeholder (`clearedOutputLabel` set): the one change a live row takes in place. */
  clearedOnly?: boolean;
}

export interface LoadHistoryOptions {
  /**
   * Also the rows overlay compactions marked (each with `compactedBy`), in their seq places: the full raw history
   * as far as the table keeps it (rows deleted by `delete`-mode compactions are only in the archive). Default false:
   * the live history.
   */
  includeCompacted?: boolean;
}

/** One live tool result whose text a clearing replaces. */
export interface ClearedOutput {
  id: string;
  /** The placeholder that becomes the row's text. */
  content: string;
  /** The `tool_output` archive entry holding the message as appended (`ConversationMessage.clearedOutputLabel`). */
  label: string;
}

/** The writes a tool-output clearing commits at once (tier 2 of compaction). */
export interface CommitClearing {
  conversationId: string;
  operationId: string;
  cleared: ClearedOutput[];
  labels: string[];
}

/** What `eraseConversation` deleted from the live store: rows per table (0 everywhere: nothing was stored). */
export interface ConversationErasure {
  /** The `conversations` row (0 or 1; 0 too when messages appended after the boundary keep it). */
  conversations: number;
  /** Message rows: live, overlay-marked and the clip-archive. */
  messages: number;
  /** Messages appended after the erase's boundary (`EraseConversationOptions.throughSeq`), kept. */
  messagesKept: number;
  /** Entries of the id ledger (`message_ids`). */
  messageIds: number;
  /** Operation journal rows of every kind and status, the erase's own included. */
  operations: number;
  /** The loop guard record (`compaction_pauses`, 0 or 1). */
  loopGuard: number;
  /** The token calibration (`token_calibrations`, 0 or 1). */
  calibration: number;
}

/** What `eraseConversation` removes. */
export interface EraseConversationOptions {
  /**
   * Remove messages up to this seq only (an erase's `eraseThroughSeq`): later ones stay, with their id ledger entries
   * and the conversation row. Default: every message.
   */
  throughSeq?: number;
}

/** Work done inside one database transaction. */
export interface PersistenceTransaction {
  append(conversationId: string, messages: NewMessage[]): Promise<ConversationMessage[]>;
  /** Deletes those of `ids` that are live messages of the conversation (rows an overlay compaction marked stay). */
  deleteByIds(conversationId: string, ids: string[]): Promise<number>;
  /**
   * The live history: the clip-archive (seq 0) and the messages no compaction took out, by seq. With
   * `includeCompacted`, the overlay rows too.
   */
  loadHistory(conversationId: string, options?: LoadHistoryOptions): Promise<ConversationMessage[]>;
  /**
   * How many of `ids` are live messages of the conversation (one indexed lookup, no rows loaded; overlay rows are not
   * live); with `clearedOnly`, how many of those are cleared tool outputs.
   */
  countLive(conversationId: string, ids: string[], options?: CountLiveOptions): Promise<number>;
  /**
   * Pin (or unpin) those of `ids` that are live messages of the conversation (`ConversationMessage.pinned`); returns how
   * many that is. A pinned row is never taken by `commitCompaction`. Refuses a `pinned` that is not a boolean.
   */
  setPinned(conversationId: string, ids: string[], pinned: boolean): Promise<number>;
  /** Refuses (`commit.deleteIds`) to take a pinned row, writing nothing. */
  commitCompaction(commit: CommitCompaction): Promise<CommitReport>;
  /**
   * In one transaction: replace the text of each listed tool result by its placeholder and set its
   * `clearedOutputLabel` (id, seq, role, tool call id, name and time stay), and record the operation `committed` as a
   * `clear_tool_outputs`. Changes nothing, throwing, when a listed id is not a live tool result of the conversation,
   * is already cleared, or is listed twice, or when the operation belongs to another conversation. Returns the rows as
   * now stored.
   */
  commitClearing(commit: CommitClearing): Promise<ConversationMessage[]>;
  /**
   * Which of `ids` the conversation has ever accepted (live, archived, or covered by a pending
   * operation), each with the `messageDigest` of the message it was given to. Ids are never reused:
   * `append` refuses them, whatever became of the first message.
   */
  findUsedIds(conversationId: string, ids: string[]): Promise<UsedId[]>;
}

/** An id a conversation already accepted, and the digest (`conversation/message-digest.ts`) of its message. */
export interface UsedId {
  id: string;
  /** Absent for ids recorded before digests were kept (migrations/003). */
  digest?: string;
}

/**
 * The loop guard's record of one conversation (`migrations/004_compaction_pause.sql`): the compactions in a row
 * that left its context at or over the trigger (or failed), the trigger they were counted against, and since when
 * automatic compaction is paused. The compactor's loop guard decides (`compaction/usage/loop-guard.ts`); the store keeps
 * what it decided, so every process sharing the store sees it.
 */
export interface LoopGuardState {
  /** Compactions in a row that did not bring the context under `trigger`: 1 or more (no streak, no record). */
  streak: number;
  /** The trigger, in tokens, the streak was counted against. */
  trigger: number;
  /** When automatic compaction was paused (ISO time); absent while it is not paused. */
  pausedAt?: string;
  updatedAt: string;
}

/** What `setLoopGuardState` writes. */
export interface LoopGuardUpdate {
  /** An integer from 1 to 2,147,483,647. */
  streak: number;
  /** An integer from 1 to 2,147,483,647. */
  trigger: number;
  /** Automatic compaction is paused: `pausedAt` is set (kept when it already was); false removes it. */
  paused: boolean;
}

/**
 * A conversation's token calibration by the assistant's reported usage (`migrations/005_token_calibration.sql`):
 * the factor memfold's counts of its context are multiplied by, and the two counts it came from. The compactor
 * decides it (`Compactor.observeUsage`); the store keeps it, so every process sharing the store, and a restarted
 * one, counts the conversation the same way. `commitCompaction` drops it.
 */
export interface TokenCalibration {
  /** promptTokens / estimatedTokens, clamped by the compactor to [1, 5]. */
  factor: number;
  /** The prompt tokens the assistant's provider reported for one request. */
  promptTokens: number;
  /** memfold's own count of the context that request was built from. */
  estimatedTokens: number;
  /** When it was observed (ISO time). */
  observedAt: string;
}

/** What `setTokenCalibration` writes. */
export interface TokenCalibrationUpdate {
  /** A number from 1 to 5 (`CALIBRATION_RANGE`). */
  factor: number;
  /** An integer from 1 to 2,147,483,647. */
  promptTokens: number;
  /** An integer from 1 to 2,147,483,647. */
  estimatedTokens: number;
}

/**
 * A conversation's compaction settings overrides as the store keeps them (`migrations/014_conversation_settings.sql`):
 * the keys that were set, by their setting names, and when they were last written. The store checks only that they
 * are a JSON object; which keys and values are settings is the compactor's to say (`compaction/stored-settings.ts`).
 */
export interface ConversationSettingsRecord {
  settings: Record<string, unknown>;
  /** When they were written (ISO time, the store's clock). */
  updatedAt: string;
}

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
