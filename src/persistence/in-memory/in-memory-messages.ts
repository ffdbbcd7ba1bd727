/**
 * The message operations of the port over in-memory tables: the same checks and results as
 * `kysely/kysely-messages.ts`. Each operation checks everything before it changes anything, and
 * runs without awaiting in between, so it is all-or-nothing on its own; the store runs the writes one
 * at a time and `transaction()` runs them on a snapshot.
 */
import { requireCountLiveOptions, requirePinnedFlag } from '../count-live-options.js';
import type { ConversationMessage, NewMessage } from '../../conversation/types.js';
import { messageDigest } from '../../conversation/message-digest.js';
import { InvalidArgumentError, MemfoldError } from '../../errors.js';
import { checkBatchIds, checkLeadingToolResults, idAlreadyUsed, leadingToolResults } from '../append-batch-checks.js';
import { clipArchiveId } from '../clip-archive-id.js';
import { requireConversationId } from '../../conversation/conversation-id.js';
import { requireTextArray } from '../../conversation/text.js';
import { normalizeNewMessages, type NormalizedMessage } from '../normalize-new-messages.js';
import type { CountLiveOptions, CommitClearing, CommitCompaction, CommitReport, LoadHistoryOptions, UsedId } from '../persistence-provider.js';
import { checkCommitClearing, clearingRowProblem } from '../clearing-checks.js';
import { checkCommit, type CheckedCommit } from '../commit-input.js';
import { conversationKey, copyOf, type ConversationRecord, type InMemoryTables } from './in-memory-tables.js';
import { operationWriteProblem, upsertOperation } from './in-memory-operation-log.js';

export interface InMemoryContext {
  namespace: string;
  clock: () => Date;
  maxMessageBytes: number;
}

/** The port's message operations, synchronous, on whatever tables `tables()` gives at the call. */
export interface InMemoryMessageOperations {
  append(conversationId: string, messages: NewMessage[]): ConversationMessage[];
  deleteByIds(conversationId: string, ids: string[]): number;
  loadHistory(conversationId: string, options?: LoadHistoryOptions): ConversationMessage[];
  countLive(conversationId: string, ids: string[], options?: CountLiveOptions): number;
  setPinned(conversationId: string, ids: string[], pinned: boolean): number;
  commitCompaction(commit: CommitCompaction): CommitReport;
  commitClearing(commit: CommitClearing): ConversationMessage[];
  findUsedIds(conversationId: string, ids: string[]): UsedId[];
}

function toMessage(conversationId: string, seq: number, row: NormalizedMessage, createdAt: string): ConversationMessage {
  const message: ConversationMessage = { id: row.id, conversationId, seq, role: row.role, content: row.content.text, createdAt, kind: 'message' };
  if (row.content.toolCalls !== undefined) message.toolCalls = row.content.toolCalls;
  if (row.content.toolCallId !== undefined) message.toolCallId = row.content.toolCallId;
  if (row.content.name !== undefined) message.name = row.content.name;
  if (row.content.sessionId !== undefined) message.sessionId = row.content.sessionId;
  if (row.pinned === true) message.pinned = true;
  return message;
}

/** A row of the live history: not marked by an overlay compaction. */
const isLive = (m: ConversationMessage) => m.compactedBy === undefined;

function digestOf(row: NormalizedMessage): string {
  const { text, ...rest } = row.content;
  return messageDigest({ role: row.role, content: text, ...rest });
}

export function createInMemoryMessages(tables: () => InMemoryTables, context: InMemoryContext): InMemoryMessageOperations {
  const { namespace, clock, maxMessageBytes } = context;
  const find = (conversationId: string) => tables().conversations.get(conversationKey(namespace, conversationId));
  const touch = (conversationId: string, now: string) => touchRecord(tables(), namespace, conversationId, now);
  const at = (conversationId: string): CommitTarget => ({ tables: tables(), context, conversationId });

  return {
    append(conversationId, messages) {
      requireConversationId(conversationId);
      const rows = normalizeNewMessages(messages, { maxMessageBytes });
      checkBatchIds(rows, clipArchiveId(conversationId));
      if (rows.length === 0) return [];
      const existing = find(conversationId);
      const used = rows.findIndex((row) => existing?.usedIds.has(row.id));
      if (used >= 0) throw idAlreadyUsed(used, rows[used]!.id);
      const opener = existing?.messages.findLast((m) => m.kind === 'message' && m.role !== 'tool' && isLive(m));
      checkLeadingToolResults(leadingToolResults(rows), opener);
      // Every check passed: from here nothing throws, so the batch is stored whole.
      const now = clock().toISOString();
      const record = touch(conversationId, now);
      const first = record.nextSeq;
      record.nextSeq += rows.length;
      const stored = rows.map((row, offset) => toMessage(conversationId, first + offset, row, row.createdAt ?? now));
      rows.forEach((row) => record.usedIds.set(row.id, digestOf(row)));
      record.messages.push(...copyOf(stored));
      return stored;
    },

    deleteByIds(conversationId, ids) {
      requireConversationId(conversationId);
      const wanted = new Set(requireTextArray(ids, 'ids'));
      const record = find(conversationId);
      if (record === undefined || wanted.size === 0) return 0;
      const before = record.messages.length;
      record.messages = record.messages.filter((m) => !(wanted.has(m.id) && isLive(m)));
      const deleted = before - record.messages.length;
      if (deleted > 0) record.updatedAt = clock().toISOString();
      return deleted;
    },

    findUsedIds(conversationId, ids) {
      requireConversationId(conversationId);
      const wanted = requireTextArray(ids, 'ids');
      const record = find(conversationId);
      if (record === undefined) return [];
      return [...new Set(wanted)].flatMap((id) => {
        const digest = record.usedIds.get(id);
        return digest === undefined ? [] : [{ id, digest }];
      });
    },

    loadHistory(conversationId, options = {}) {
      requireConversationId(conversationId);
      const includeCompacted = options?.includeCompacted ?? false;
      if (typeof includeCompacted !== 'boolean') throw new InvalidArgumentError('options.includeCompacted', 'must be a boolean');
      const rows = find(conversationId)?.messages ?? [];
      return copyOf(includeCompacted ? rows : rows.filter(isLive));
    },

    countLive(conversationId, ids, options = {}) {
      requireConversationId(conversationId);
      const wanted = new Set(requireTextArray(ids, 'ids'));
      const clearedOnly = requireCountLiveOptions(options);
      return (find(conversationId)?.messages ?? []).filter((m) => wanted.has(m.id) && isLive(m) && (!clearedOnly || m.clearedOutputLabel !== undefined)).length;
    },

    setPinned(conversationId, ids, pinned) {
      requireConversationId(conversationId);
      const wanted = new Set(requireTextArray(ids, 'ids'));
      requirePinnedFlag(pinned);
      const rows = (find(conversationId)?.messages ?? []).filter((m) => wanted.has(m.id) && isLive(m) && m.kind === 'message');
      for (const m of rows) {
        if (pinned) m.pinned = true;
        else delete m.pinned;
      }
      return rows.length;
    },

    commitCompaction: (commit) => {
      const checked = checkCommit(commit);
      return commitCompactionIn(at(checked.conversationId), checked);
    },

    commitClearing: (input) => {
      const checked = checkCommitClearing(input);
      return commitClearingIn(at(checked.conversationId), checked);
    },
  };
}

/** The conversation's record, created when missing; `updatedAt` moves to now. */
function touchRecord(tables: InMemoryTables, namespace: string, conversationId: string, now: string): ConversationRecord {
  const key = conversationKey(namespace, conversationId);
  let record = tables.conversations.get(key);
  if (record === undefined) {
    record = { namespace, id: conversationId, createdAt: now, updatedAt: now, nextSeq: 1, messages: [], usedIds: new Map() };
    tables.conversations.set(key, record);
  }
  record.updatedAt = now;
  return record;
}

/** The tables and the conversation a commit writes. */
interface CommitTarget {
  tables: InMemoryTables;
  context: InMemoryContext;
  conversationId: string;
}

/** A compaction's commit, `commit` already checked: archived rows out (or marked), the clip-archive replaced. */
function commitCompactionIn(target: CommitTarget, commit: CheckedCommit): CommitReport {
  const { tables: current, context } = target;
  const { namespace, clock } = context;
  const find = (conversationId: string) => current.conversations.get(conversationKey(namespace, conversationId));
  const touch = (conversationId: string, now: string) => touchRecord(current, namespace, conversationId, now);
  const { conversationId, operationId, deleteIds: wanted, clipArchive: text, labels, mode, usage } = commit;
  const problem = operationWriteProblem(current, namespace, { id: operationId, conversationId, mode }, { id: 'commit.operationId', mode: 'commit.mode' });
  if (problem !== undefined) throw problem;
  const taking = new Set(wanted);
  // Only ordinary messages are marked (the Kysely store's check); a delete takes any live row named.
  const taken = (m: ConversationMessage) => taking.has(m.id) && isLive(m) && (mode === 'delete' || m.kind === 'message');
  const live = (find(conversationId)?.messages ?? []).filter(taken).length;
  const pinned = (find(conversationId)?.messages ?? []).filter((m) => taking.has(m.id) && m.pinned === true).length;
  if (pinned > 0) {
    // A message pinned after the compaction planned stays live (the Kysely store's check).
    throw new MemfoldError('persistence_error', `Commit of ${operationId} would take ${pinned} pinned message(s); pinned messages stay live`, {
      details: { field: 'commit.deleteIds' },
    });
  }
  if (live !== taking.size) {
    // Some archived message is no longer live: the caller planned on a stale history.
    throw new MemfoldError(
      'persistence_error',
      `Commit of ${operationId} expected to ${mode === 'overlay' ? 'mark' : 'delete'} ${taking.size} live messages but found ${live}`,
      { details: { field: 'commit.deleteIds' } },
    );
  }
  const now = clock().toISOString();
  const record = touch(conversationId, now);
  const compactedThroughSeq = wanted.length > 0 ? record.nextSeq - 1 : record.messages.find((m) => m.seq === 0)?.compactedThroughSeq;
  // As the clip-archive records it or, at the first compaction, the conversation's lowest seq (the Kysely store's rule).
  const previousClip = record.messages.find((m) => m.seq === 0);
  const openingSeq =
    previousClip !== undefined
      ? previousClip.openingSeq
      : record.messages.reduce<number | undefined>((low, m) => (low === undefined || m.seq < low ? m.seq : low), undefined);
  const clipArchive: ConversationMessage = {
    id: clipArchiveId(conversationId),
    conversationId,
    seq: 0,
    role: 'system',
    content: text,
    createdAt: now,
    kind: 'clip_archive',
    ...(compactedThroughSeq !== undefined ? { compactedThroughSeq } : {}),
    ...(openingSeq !== undefined ? { openingSeq } : {}),
  };
  // seq 0 is the clip-archive's slot: the new one replaces whatever held it.
  const rest = record.messages.filter((m) => m.seq !== 0);
  if (mode === 'overlay') {
    for (const m of rest) if (taken(m)) m.compactedBy = operationId;
    record.messages = [copyOf(clipArchive), ...rest];
  } else {
    record.messages = [copyOf(clipArchive), ...rest.filter((m) => !taken(m))];
  }
  // The context the calibration was measured on is gone.
  delete record.calibration;
  upsertOperation(
    current,
    namespace,
    { id: operationId, conversationId, status: 'committed', mode, messageIds: wanted, labels, ...(usage ? { usage } : {}) },
    now,
  );
  return { deleted: mode === 'delete' ? live : 0, marked: mode === 'overlay' ? live : 0, clipArchive };
}

/** A clearing's commit, `input` already checked: every placeholder in place, or nothing. */
function commitClearingIn(target: CommitTarget, input: CommitClearing): ConversationMessage[] {
  const { tables: current, context } = target;
  const { namespace, clock } = context;
  const find = (conversationId: string) => current.conversations.get(conversationKey(namespace, conversationId));
  const touch = (conversationId: string, now: string) => touchRecord(current, namespace, conversationId, now);
  const { conversationId, operationId, cleared, labels } = input;
  const rows = new Map((find(conversationId)?.messages ?? []).map((m) => [m.id, m]));
  cleared.forEach((c, i) => {
    const problem = clearingRowProblem(rows.get(c.id), i);
    if (problem) throw problem;
  });
  const problem = operationWriteProblem(
    current,
    namespace,
    { id: operationId, conversationId, mode: undefined },
    { id: 'commit.operationId', mode: 'commit.mode' },
  );
  if (problem !== undefined) throw problem;
  // Every check passed: the rows change together.
  const now = clock().toISOString();
  const record = touch(conversationId, now);
  const updated = cleared.map((c) => Object.assign(rows.get(c.id)!, { content: c.content, clearedOutputLabel: c.label }));
  // The context the calibration was measured on changed, as after any compaction.
  delete record.calibration;
  const ids = cleared.map((c) => c.id);
  upsertOperation(
    current,
    namespace,
    { id: operationId, conversationId, kind: 'clear_tool_outputs', status: 'committed', mode: undefined, messageIds: ids, labels },
    now,
  );
  return copyOf(updated).sort((a, b) => a.seq - b.seq);
}
