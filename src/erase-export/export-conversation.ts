/**
 * A conversation as JSON Lines records: everything memfold keeps of it, live and archived, one record a line, each
 * with a `kind`. Reads only. Records come in this order: the `conversation` header; the live rows in seq order
 * (`live_message`; the clip-archive first, overlay rows with `compactedBy`); the summary batches, by depth then time
 * (`summary`, with their children); then each verbatim archive entry (`segment`, a transcript segment or a cleared tool
 * output) followed by its messages exactly as they were appended (`archived_message`).
 */
import type { Archive } from '../archive/archive.js';
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { requireText } from '../conversation/text.js';
import type { PersistenceProvider } from '../persistence/persistence-provider.js';

/** The `format` of the header: changes when a record's shape does. */
export const EXPORT_FORMAT = 'memfold.conversation-export/1';

export interface ExportHeader {
  kind: 'conversation';
  format: typeof EXPORT_FORMAT;
  conversationId: string;
  namespace: string;
  exportedAt: string;
}

/** A row of the live table, as `history(id, { includeCompacted: true })` gives it. */
export interface ExportLiveMessage {
  kind: 'live_message';
  message: ConversationMessage;
}

/** Fields every archive record carries. */
interface ExportEntryFields {
  label: string;
  start: string;
  end: string;
  count: number;
  /** Depth 0 and verbatim entries: the message ids covered; above: the child batches' labels. */
  sourceIds: string[];
  /** The batch (or, for a cleared tool output, the transcript segment) that covers this one. */
  parentLabel?: string;
  operationId: string;
  sessions?: string[];
}

/** A summary batch: its text with its header, and the batches it summarizes. */
export interface ExportSummary extends ExportEntryFields {
  kind: 'summary';
  depth: number;
  /** Labels of the batches whose `parentLabel` is this one (empty at depth 0). */
  children: string[];
  content: string;
}

/** A verbatim archive entry; its messages follow it as `archived_message` records. */
export interface ExportSegment extends ExportEntryFields {
  kind: 'segment';
  entryKind: 'transcript' | 'tool_output';
}

/** A message as it was appended, from the verbatim entry `label`. */
export interface ExportArchivedMessage {
  kind: 'archived_message';
  label: string;
  entryKind: 'transcript' | 'tool_output';
  message: ConversationMessage;
}

export type ExportRecord = ExportHeader | ExportLiveMessage | ExportSummary | ExportSegment | ExportArchivedMessage;

export interface ExportDeps {
  archive: Pick<Archive, 'list'>;
  persistence: Pick<PersistenceProvider, 'loadHistory'>;
  namespace: string;
  /** Default `() => new Date()`. */
  clock?: () => Date;
}

function entryFields(entry: ArchiveEntry): ExportEntryFields {
  return {
    label: entry.label,
    start: entry.start,
    end: entry.end,
    count: entry.count,
    sourceIds: entry.sourceIds,
    ...(entry.parentLabel !== undefined ? { parentLabel: entry.parentLabel } : {}),
    operationId: entry.operationId,
    ...(entry.sessions !== undefined ? { sessions: entry.sessions } : {}),
  };
}

/** The summary records, by depth then time, each with its children. Pure. */
export function summaryRecords(summaries: readonly ArchiveEntry[]): ExportSummary[] {
  const children = new Map<string, string[]>();
  for (const entry of summaries) {
    if (entry.parentLabel !== undefined) children.set(entry.parentLabel, [...(children.get(entry.parentLabel) ?? []), entry.label]);
  }
  return [...summaries]
    .sort((a, b) => a.depth - b.depth)
    .map((entry) => ({ kind: 'summary', depth: entry.depth, ...entryFields(entry), children: children.get(entry.label) ?? [], content: entry.content }));
}

/** The records of verbatim entries: each segment, then its messages. Pure. */
export function verbatimRecords(entries: readonly ArchiveEntry[]): Array<ExportSegment | ExportArchivedMessage> {
  return entries.flatMap((entry) => {
    const entryKind = entry.kind as 'transcript' | 'tool_output';
    const messages = (entry.messages ?? []).map((message): ExportArchivedMessage => ({ kind: 'archived_message', label: entry.label, entryKind, message }));
    return [{ kind: 'segment' as const, entryKind, ...entryFields(entry) }, ...messages];
  });
}

/**
 * Every record of the conversation (see the file comment). A conversation with nothing stored gives the header
 * alone. Refuses an empty id (`conversationId`). Each kind of archive entry is listed on its own, so at most one
 * kind's entries are held at a time.
 */
export async function* exportConversation(deps: ExportDeps, conversationId: string): AsyncGenerator<ExportRecord> {
  requireText(conversationId, 'conversationId');
  const exportedAt = (deps.clock ?? (() => new Date()))().toISOString();
  yield { kind: 'conversation', format: EXPORT_FORMAT, conversationId, namespace: deps.namespace, exportedAt };
  for (const message of await deps.persistence.loadHistory(conversationId, { includeCompacted: true })) yield { kind: 'live_message', message };
  yield* summaryRecords(await deps.archive.list({ conversationId, kind: 'summary' }));
  for (const kind of ['transcript', 'tool_output'] as const) yield* verbatimRecords(await deps.archive.list({ conversationId, kind }));
}
