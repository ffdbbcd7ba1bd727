/** Database rows to the port's types: bigint strings to numbers, Date to ISO strings, absent fields omitted. */
import type { ConversationMessage, MessageKind, Role } from '../../conversation/types.js';
import type { CompactionMode, CompactionOperation, OperationKind, OperationStatus, OperationUsage } from '../persistence-provider.js';
import type { StoredContent } from './kysely-schema.js';

/** A timestamptz as pg returns it (Date), or already a string, as an ISO string. */
export function toIso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** The message columns the store selects. */
export interface MessageRow {
  conversation_id: string;
  id: string;
  seq: string | number;
  role: string;
  kind: string;
  content: StoredContent;
  created_at: Date | string;
  compacted_by: string | null;
  pinned: boolean;
}

/** A message row as the port's ConversationMessage (`kind` always set; `compactedBy` only on an overlay row). */
export function toMessage(row: MessageRow): ConversationMessage {
  const message: ConversationMessage = {
    id: row.id,
    conversationId: row.conversation_id,
    seq: Number(row.seq),
    role: row.role as Role,
    content: row.content.text,
    createdAt: toIso(row.created_at),
    kind: row.kind as MessageKind,
  };
  if (row.content.toolCalls !== undefined) message.toolCalls = row.content.toolCalls;
  if (row.content.toolCallId !== undefined) message.toolCallId = row.content.toolCallId;
  if (row.content.name !== undefined) message.name = row.content.name;
  if (row.content.sessionId !== undefined) message.sessionId = row.content.sessionId;
  if (row.content.clearedOutputLabel !== undefined) message.clearedOutputLabel = row.content.clearedOutputLabel;
  if (row.content.compactedThroughSeq !== undefined) message.compactedThroughSeq = row.content.compactedThroughSeq;
  if (row.content.openingSeq !== undefined) message.openingSeq = row.content.openingSeq;
  if (row.compacted_by !== null) message.compactedBy = row.compacted_by;
  if (row.pinned) message.pinned = true;
  return message;
}

/**
 * A message row as one JSON array (`MESSAGE_JSON`): `[id, seq, role, kind, content, createdAt ms, compactedBy, pinned]`.
 * One text field a row instead of nine: PGlite's wire bridge pays per field (a buffer copy and a decode each), so a
 * history read this way costs a third of the columns' time there, and no less on PostgreSQL.
 */
export type MessageJsonRow = [string, number, string, string, StoredContent, number, string | null, boolean];

/** A `MESSAGE_JSON` row of `conversationId` as the port's ConversationMessage (as `toMessage` maps the columns). */
export function jsonToMessage(conversationId: string, text: string): ConversationMessage {
  const [id, seq, role, kind, content, createdAtMs, compactedBy, pinned] = JSON.parse(text) as MessageJsonRow;
  return toMessage({
    conversation_id: conversationId,
    id,
    seq,
    role,
    kind,
    content,
    created_at: new Date(createdAtMs),
    compacted_by: compactedBy,
    pinned,
  });
}

/** A compaction_operations row as pg returns it. */
export interface OperationRow {
  id: string;
  conversation_id: string;
  status: string;
  kind: string;
  mode: string;
  message_ids: string[];
  labels: string[];
  error: string | null;
  usage: OperationUsage | null;
  erase_through_seq?: string | number | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** An operation row as the port's CompactionOperation (`error` omitted when null). */
export function toOperation(row: OperationRow): CompactionOperation {
  const operation: CompactionOperation = {
    id: row.id,
    conversationId: row.conversation_id,
    status: row.status as OperationStatus,
    kind: row.kind as OperationKind,
    mode: row.mode as CompactionMode,
    messageIds: row.message_ids,
    labels: row.labels,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
  if (row.error !== null) operation.error = row.error;
  if (row.usage !== null && row.usage !== undefined) operation.usage = row.usage;
  if (row.erase_through_seq !== null && row.erase_through_seq !== undefined) operation.eraseThroughSeq = Number(row.erase_through_seq);
  return operation;
}
