/** The persistence port's transaction: the message-table work that runs inside one database transaction. */
import type { ConversationMessage, NewMessage } from '../conversation/types.js';
import type { CommitClearing, CommitCompaction, CommitReport } from './persistence-operations.js';

export interface CountLiveOptions {
  /** Count only the rows a tier-2 clearing gave a placeholder (`clearedOutputLabel` set): the one change a live row takes in place. */
  clearedOnly?: boolean;
}

/** `countLiveAndCleared`'s answer. */
export interface LiveCounts {
  /** How many of the ids are live messages. */
  live: number;
  /** How many of those hold a cleared tool output's placeholder. */
  cleared: number;
}

export interface LoadHistoryOptions {
  /**
   * Also the rows overlay compactions marked (each with `compactedBy`), in their seq places: the full raw history
   * as far as the table keeps it (rows deleted by `delete`-mode compactions are only in the archive). Default false:
   * the live history.
   */
  includeCompacted?: boolean;
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
   * Both counts of `countLive` in one lookup: how many of `ids` are live messages, and how many of those are cleared
   * tool outputs (a compaction's check that its plan still stands sends its ids once, not twice).
   */
  countLiveAndCleared(conversationId: string, ids: string[]): Promise<LiveCounts>;
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
