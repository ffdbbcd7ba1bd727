/**
 * The two commits of the port, each one transaction under the conversation's lock (re-checked on PostgreSQL): a
 * compaction's (archived rows out, the clip-archive replaced) and a clearing's (placeholders in place of outputs).
 * Either also records its operation `committed` and drops the conversation's calibration, all or nothing.
 */
import { sql, type Kysely } from 'kysely';
import type { ConversationMessage } from '../../conversation/types.js';
import { MemfoldError } from '../../errors.js';
import type { CommitClearing, CommitCompaction, CommitReport } from '../persistence-provider.js';
import type { CheckedCommit } from '../commit-input.js';
import { clearingRowProblem } from '../clearing-checks.js';
import { clipArchiveId } from '../clip-archive-id.js';
import { clipArchiveThroughSeq, openingSeqOf } from './kysely-clip-archive.js';
import { requireLockHeld } from './kysely-conversation-lock.js';
import { countPinned, deleteIds, markIds, MESSAGE_COLUMNS, touchConversation, type InConversation } from './kysely-message-rows.js';
import { commitRecordedOperation, refusedOperationWrite, upsertOperationRow } from './kysely-operation-log.js';
import { toMessage, type MessageRow } from './kysely-row-mapping.js';
import type { Database } from './kysely-schema.js';
import { dropTokenCalibration } from './kysely-token-calibration.js';

const FIELDS = { id: 'commit.operationId', mode: 'commit.mode' };

/** A compaction's commit, `commit` already checked (`checkCommit`), inside `trx`. */
export async function commitCompactionIn(at: InConversation, commit: CheckedCommit): Promise<CommitReport> {
  const { trx, context, conversationId } = at;
  const { namespace, clock } = context;
  const { operationId, deleteIds: wanted, labels, mode, usage, idsRecorded } = commit;
  // Under a conversation lock whose connection was lost, another process may be compacting: commit nothing.
  await requireLockHeld(trx, context.heldLock?.(conversationId));
  // The conversation row's lock orders this commit with appends: every seq below its next one was appended before.
  const nextSeq = await touchConversation(at, 0);
  const compactedThroughSeq = wanted.length > 0 ? nextSeq - 1 : await clipArchiveThroughSeq(trx, namespace, conversationId);
  // Read before the commit takes any row: at the first compaction, the lowest seq is the opening's.
  const openingSeq = await openingSeqOf(trx, namespace, conversationId);
  const now = clock().toISOString();
  // The operation row first: an overlay mark refers to it. Any throw below rolls it back with the rest.
  const row = { id: operationId, conversationId, status: 'committed' as const, mode, messageIds: wanted, labels, error: null, usage: usage ?? null };
  // Ids the operation was recorded with are not written again: its row is updated in place when it is there.
  const updated = idsRecorded && (await commitRecordedOperation(trx, namespace, row, now));
  if (!updated && !(await upsertOperationRow(trx, namespace, row, now))) throw await refusedOperationWrite(trx, namespace, row, FIELDS);
  // One statement takes the rows: live, among the ids, and not pinned. A message pinned after the compaction planned
  // stays live, so the count falls short; only then is the reason looked up. Throwing rolls everything back.
  const taken = mode === 'overlay' ? await markIds(at, wanted, operationId) : await deleteIds(at, wanted, { sparePinned: true });
  const expected = new Set(wanted).size;
  if (taken !== expected) throw await shortCommit(at, { operationId, wanted, mode, expected, taken });
  const content = {
    text: commit.clipArchive,
    ...(compactedThroughSeq === undefined ? {} : { compactedThroughSeq }),
    ...(openingSeq === undefined ? {} : { openingSeq }),
  };
  const clip = await writeClipArchive(trx, { namespace, conversationId, content: JSON.stringify(content), now });
  // The context the calibration was measured on is gone: dropped in this transaction, so no process counts
  // the new live rows with it.
  await dropTokenCalibration(trx, namespace, conversationId);
  return { deleted: mode === 'delete' ? taken : 0, marked: mode === 'overlay' ? taken : 0, clipArchive: toMessage(clip) };
}

/** Why a commit took fewer rows than it archived: pinned ones among them (the commit undone, the next one plans around them), or rows no longer live (planned on a stale history). */
async function shortCommit(
  at: InConversation,
  short: { operationId: string; wanted: string[]; mode: CommitCompaction['mode']; expected: number; taken: number },
): Promise<MemfoldError> {
  const { operationId, wanted, mode, expected, taken } = short;
  const details = { field: 'commit.deleteIds' };
  const pinned = await countPinned(at, wanted);
  if (pinned > 0)
    return new MemfoldError('persistence_error', `Commit of ${operationId} would take ${pinned} pinned message(s); pinned messages stay live`, { details });
  const verb = mode === 'overlay' ? 'mark' : 'delete';
  return new MemfoldError('persistence_error', `Commit of ${operationId} expected to ${verb} ${expected} live messages but found ${taken}`, { details });
}

/** The clip-archive row, in seq 0, its slot: whatever holds it is replaced. */
function writeClipArchive(trx: Kysely<Database>, input: { namespace: string; conversationId: string; content: string; now: string }) {
  const { namespace, conversationId, content, now } = input;
  return trx
    .insertInto('messages')
    .values({
      namespace,
      conversation_id: conversationId,
      id: clipArchiveId(conversationId),
      seq: 0,
      role: 'system',
      kind: 'clip_archive',
      content,
      created_at: now,
    })
    .onConflict((conflict) =>
      conflict.columns(['namespace', 'conversation_id', 'seq']).doUpdateSet((eb) => ({
        id: eb.ref('excluded.id'),
        content: eb.ref('excluded.content'),
        created_at: eb.ref('excluded.created_at'),
      })),
    )
    .returning(MESSAGE_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** A clearing's commit, `input` already checked (`checkCommitClearing`), inside `trx`: all or nothing. */
export async function commitClearingIn(at: InConversation, input: CommitClearing): Promise<ConversationMessage[]> {
  const { trx, context, conversationId } = at;
  const { namespace, clock } = context;
  const { operationId, cleared, labels } = input;
  const ids = cleared.map((c) => c.id);
  await requireLockHeld(trx, context.heldLock?.(conversationId));
  // The conversation's row lock orders this with appends and compactions of the same conversation.
  await touchConversation(at, 0);
  const rows = await trx
    .selectFrom('messages')
    .select(MESSAGE_COLUMNS)
    .where('namespace', '=', namespace)
    .where('conversation_id', '=', conversationId)
    .where(sql<boolean>`id = any(${ids}::text[])`)
    .forUpdate()
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const contents = cleared.map((c, i) => {
    const row = byId.get(c.id);
    const problem = clearingRowProblem(row && toMessage(row), i);
    // Throwing rolls back: a clearing is all or nothing.
    if (problem) throw problem;
    return JSON.stringify({ ...row!.content, text: c.content, clearedOutputLabel: c.label });
  });
  const updated = await sql<MessageRow>`
    update messages as m set content = v.content::jsonb
    from unnest(${ids}::text[], ${contents}::text[]) as v(id, content)
    where m.namespace = ${namespace} and m.conversation_id = ${conversationId} and m.id = v.id
    returning m.conversation_id, m.id, m.seq, m.role, m.kind, m.content, m.created_at, m.compacted_by, m.pinned`.execute(trx);
  const row = {
    id: operationId,
    conversationId,
    kind: 'clear_tool_outputs' as const,
    status: 'committed' as const,
    mode: undefined,
    messageIds: ids,
    labels,
    error: null,
  };
  if (!(await upsertOperationRow(trx, namespace, row, clock().toISOString()))) throw await refusedOperationWrite(trx, namespace, row, FIELDS);
  // The context the calibration was measured on changed, as after any compaction.
  await dropTokenCalibration(trx, namespace, conversationId);
  return updated.rows.map(toMessage).sort((a, b) => a.seq - b.seq);
}
