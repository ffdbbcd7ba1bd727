/**
 * The vocabulary every module shares. Pure types, no runtime code.
 */

export type Role = 'system' | 'user' | 'assistant' | 'tool';

/**
 * `message` is an ordinary turn; `clip_archive` is the system message memfold writes in place of archived history;
 * `continuation` is the note `context()` adds after a compaction (`compaction.continuationMessage`), never stored.
 */
export type MessageKind = 'message' | 'clip_archive' | 'continuation';

/** A tool call in the OpenAI chat format. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One stored message. `seq` orders a conversation (1, 2, 3, ...); the clip-archive row has seq 0. */
export interface ConversationMessage {
  id: string;
  conversationId: string;
  seq: number;
  role: Role;
  content: string;
  toolCalls?: ToolCall[];
  /** Set on `role: 'tool'` messages: the id of the call this result answers. */
  toolCallId?: string;
  name?: string;
  /** ISO 8601 time, UTC (`2023-05-08T13:56:00.000Z`). */
  createdAt: string;
  kind?: MessageKind;
  /** The session the caller put the message in, when it gave one (`NewMessage.sessionId`). */
  sessionId?: string;
  /**
   * Only on rows read with `includeCompacted` (`loadHistory`, `memfold.history`): the overlay compaction that archived
   * this message and left its row in place. The live history never holds such a row.
   */
  compactedBy?: string;
  /**
   * Set by memfold on a tool result whose output it cleared from the live history (tier 2 of compaction): the label
   * of the `tool_output` archive entry that holds the message as it was appended. `content` is then a placeholder
   * naming that label. Never taken from `append`.
   */
  clearedOutputLabel?: string;
  /**
   * Only on the clip-archive row: the highest seq the conversation held when the last compaction that archived messages
   * committed. A user message with a higher seq came after it (the continuation note shows until one does).
   */
  compactedThroughSeq?: number;
  /**
   * Only on the clip-archive row: the seq the conversation's opening starts at, its lowest seq when its first
   * compaction committed (past an erase's boundary when the erase kept messages). The planner reads a hole before
   * the first live message as an archived opening only from there. Absent on a clip-archive written before it was kept.
   */
  openingSeq?: number;
  /**
   * Set (true) on a pinned message (`NewMessage.pinned`, `memfold.pin`): no compaction summarizes, clears or archives
   * it, nor the rest of its unit (a tool call and its results); it stays live in its place. Absent when not pinned.
   */
  pinned?: true;
}

/** What a caller appends: the store assigns `seq`, and `id`/`createdAt` when they are missing. */
export interface NewMessage {
  id?: string;
  role: Role;
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  name?: string;
  createdAt?: string | Date;
  kind?: MessageKind;
  /**
   * The session this message belongs to (1 to 256 bytes of UTF-8): a new session starts where the id changes. A
   * message without one continues the session before it, unless `compaction.sessionGapMinutes` starts a new one.
   */
  sessionId?: string;
  /** Keep this message live through every compaction until it is unpinned (`memfold.unpin`). Default false. */
  pinned?: boolean;
}

export type ArchiveKind = 'summary' | 'transcript' | 'tool_output';

/**
 * One row of archival memory.
 * - `summary`: a SummaryBatch. Depth 0 summarizes messages (sourceIds are message ids);
 *   depth d+1 summarizes batches of depth d (sourceIds are their labels).
 * - `transcript`: verbatim archived messages (in `messages`), depth 0, whose `parentLabel`
 *   is the depth-0 batch that summarizes them.
 * - `tool_output`: one tool result, verbatim (in `messages`), depth 0, archived when its output was cleared from the
 *   live row (which stays, holding a placeholder). When the message is later compacted, its transcript segment holds
 *   it verbatim and this entry's `parentLabel` names that segment: the entry is superseded.
 */
export interface ArchiveEntry {
  kind: ArchiveKind;
  label: string;
  conversationId: string;
  depth: number;
  /** ISO time of the oldest source. */
  start: string;
  /** ISO time of the newest source. */
  end: string;
  /** Number of sources (messages for depth 0 and transcripts, child batches above). */
  count: number;
  /** Summaries: header line + summary text. Transcripts: `[date] role: text` lines. */
  content: string;
  sourceIds: string[];
  /** The higher-depth batch that covers this one, once re-summarized. */
  parentLabel?: string;
  operationId: string;
  /** Transcripts and tool outputs: the archived messages, exactly as they were appended. */
  messages?: ConversationMessage[];
  /**
   * The sessions the entry covers, oldest first: of its messages at depth 0 (summaries and transcripts), the union
   * of its children's above. Absent on entries archived before sessions were recorded.
   */
  sessions?: string[];
}

/** A summary batch (an ArchiveEntry of kind `summary`). */
export type SummaryBatch = ArchiveEntry & { kind: 'summary' };

/** A verbatim transcript segment (an ArchiveEntry of kind `transcript`). */
export type TranscriptSegment = ArchiveEntry & { kind: 'transcript'; messages: ConversationMessage[] };

/** A cleared tool output (an ArchiveEntry of kind `tool_output`): one message, as it was appended. */
export type ToolOutputEntry = ArchiveEntry & { kind: 'tool_output'; messages: [ConversationMessage] };
