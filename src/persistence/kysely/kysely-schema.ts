/**
 * The tables as Kysely sees them (see migrations/001_init.sql). `pg` returns bigint columns as
 * strings and timestamptz as Date; the row mappers normalize both.
 */
import type { ColumnType } from 'kysely';
import type { StoredContent } from '../normalize-new-messages.js';
import type { OperationUsage } from '../persistence-provider.js';

/** Written as an ISO string, read back as whatever the driver parses (Date with pg). */
type Timestamp = ColumnType<Date | string, string, string>;
/** Written as a number, read back as a string (int8 exceeds JS numbers in general). */
type BigIntColumn = ColumnType<string | number, number, number>;
/** jsonb: written as a JSON string, read back parsed. */
type Json<T> = ColumnType<T, string, string>;

/** The `content` jsonb of a message row. */
export type { StoredContent };

/** Row type of `conversations`. */
export interface ConversationsTable {
  namespace: string;
  id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  next_seq: BigIntColumn;
}

/** Row type of `messages`. */
export interface MessagesTable {
  namespace: string;
  conversation_id: string;
  id: string;
  seq: BigIntColumn;
  role: string;
  kind: string;
  content: Json<StoredContent>;
  created_at: Timestamp;
  /** The overlay operation that archived the row (migrations/007_overlay.sql); null while the row is live. */
  compacted_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** Kept live by every compaction until unpinned (migrations/015_pinned_messages.sql). */
  pinned: ColumnType<boolean, boolean | undefined, boolean>;
}

/** Row type of `compaction_operations`. */
export interface CompactionOperationsTable {
  id: string;
  namespace: string;
  conversation_id: string;
  /** `compaction` | `clear_tool_outputs` (migrations/006_operation_kind.sql) | `erase` (009); defaults to `compaction`. */
  kind: ColumnType<string, string | undefined, string>;
  status: string;
  /** `delete` or `overlay` (migrations/007_overlay.sql); the first record's, never updated. */
  mode: ColumnType<string, string | undefined, never>;
  message_ids: Json<string[]>;
  labels: Json<string[]>;
  error: string | null;
  /** What the compaction's summarizer calls took, written by its commit (migrations/008_operation_usage.sql). */
  usage: ColumnType<OperationUsage | null, string | null | undefined, string | null>;
  /** An erase's boundary: the conversation's last seq when it was journaled (migrations/013_erase_boundary.sql). */
  erase_through_seq: ColumnType<string | number | null, number | null | undefined, never>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Row type of `message_ids`: every id a conversation ever accepted (migrations/003_message_ids.sql). */
export interface MessageIdsTable {
  namespace: string;
  conversation_id: string;
  id: string;
  digest: string | null;
}

/** Row type of `compaction_pauses`: the loop guard's record of a conversation (migrations/004_compaction_pause.sql). */
export interface CompactionPausesTable {
  namespace: string;
  conversation_id: string;
  streak: number;
  trigger_tokens: number;
  paused_at: Timestamp | null;
  updated_at: Timestamp;
}

/** Row type of `token_calibrations`: a conversation's token calibration (migrations/005_token_calibration.sql). */
export interface TokenCalibrationsTable {
  namespace: string;
  conversation_id: string;
  factor: number;
  prompt_tokens: number;
  estimated_tokens: number;
  observed_at: Timestamp;
}

/** Row type of `conversation_settings`: a conversation's settings overrides (migrations/014_conversation_settings.sql). */
export interface ConversationSettingsTable {
  namespace: string;
  conversation_id: string;
  settings: Json<Record<string, unknown>>;
  updated_at: Timestamp;
}

/** Row type of `memfold_rate_slots`: the next start of a shared rate limit (migrations/010_rate_slots.sql). */
export interface RateSlotsTable {
  key: string;
  next_at: Timestamp;
}

/** The schema Kysely is typed with. */
export interface Database {
  conversations: ConversationsTable;
  messages: MessagesTable;
  compaction_operations: CompactionOperationsTable;
  message_ids: MessageIdsTable;
  compaction_pauses: CompactionPausesTable;
  token_calibrations: TokenCalibrationsTable;
  conversation_settings: ConversationSettingsTable;
  memfold_rate_slots: RateSlotsTable;
  archive_binding: ArchiveBindingTable;
}

/** The archive the store belongs to (migration 012): one row. */
export interface ArchiveBindingTable {
  singleton: ColumnType<boolean, boolean | undefined, never>;
  location: string;
  archive_id: string;
  bound_at: Timestamp;
}
