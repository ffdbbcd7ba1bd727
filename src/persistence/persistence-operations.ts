/** The persistence port's operation journal and commit types: what a compaction or a clearing records and writes. */
import type { ConversationMessage } from '../conversation/types.js';

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
  /**
   * The operation was recorded (`recordOperation`) with exactly `deleteIds` as its message ids: the commit then leaves
   * that list as stored instead of writing it again (at 100k messages it is megabytes of JSON). An operation not
   * recorded yet is recorded with `deleteIds` as without it. Default false.
   */
  idsRecorded?: boolean;
}

export interface CommitReport {
  /** Rows deleted (`delete` mode). */
  deleted: number;
  /** Rows marked compacted (`overlay` mode). */
  marked: number;
  clipArchive: ConversationMessage;
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
