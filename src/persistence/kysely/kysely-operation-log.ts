/** The compaction operations log and the conversation listing: the store's bookkeeping queries. */
import { sql, type Kysely } from 'kysely';
import { InvalidArgumentError } from '../../errors.js';
import type { CompactionMode, CompactionOperation, OperationKind, OperationRecordInput, OperationStatus, OperationUsage } from '../persistence-provider.js';
import { guard } from '../persistence-error.js';
import { requireOperationKind } from '../operation-kind.js';
import { modeMismatch, optionalCompactionMode } from '../compaction-mode.js';
import { requireText, requireTextArray } from '../../conversation/text.js';
import { inTransaction } from './kysely-transaction.js';
import { toIso, toOperation } from './kysely-row-mapping.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';

const STATUSES: ReadonlySet<string> = new Set<OperationStatus>(['planned', 'archived', 'committed', 'rolled_back']);

/** The id, conversation and status every write of an operation names, checked. */
function requireOperationKeys(operation: Pick<CompactionOperation, 'id' | 'conversationId' | 'status'>): { id: string; conversationId: string } {
  const id = requireText(operation?.id, 'operation.id');
  const conversationId = requireText(operation.conversationId, 'operation.conversationId');
  if (!STATUSES.has(operation.status)) {
    throw new InvalidArgumentError('operation.status', `must be one of ${[...STATUSES].join(', ')}; got ${JSON.stringify(operation.status)}`);
  }
  return { id, conversationId };
}

/**
 * Insert the operation, or update its status, ids, labels and error (createdAt and mode stay the first write's). A
 * status other than committed clears the operation's marks in the same transaction.
 */
export async function recordOperation(db: Kysely<Database>, context: StoreContext, operation: OperationRecordInput): Promise<void> {
  const { id, conversationId } = requireOperationKeys(operation);
  const mode = optionalCompactionMode(operation.mode, 'operation.mode');
  const kind = requireOperationKind(operation.kind);
  const messageIds = requireTextArray(operation.messageIds, 'operation.messageIds');
  const labels = requireTextArray(operation.labels, 'operation.labels');
  const error = operation.error === undefined ? null : requireText(operation.error, 'operation.error', { allowEmpty: true });
  const row = { id, conversationId, kind, status: operation.status, mode, messageIds, labels, error };
  await guard(`record operation ${id}`, () =>
    inTransaction(db, async (trx) => {
      if (!(await upsertOperationRow(trx, context.namespace, row, context.clock().toISOString()))) {
        throw await refusedOperationWrite(trx, context.namespace, row, { id: 'operation.id', mode: 'operation.mode' });
      }
      if (operation.status !== 'committed') await clearMarks(trx, context.namespace, conversationId, id);
    }),
  );
}

/** Overlay rows the operation marked become live again: an operation that is not committed has no marks. */
async function clearMarks(db: Kysely<Database>, namespace: string, conversationId: string, operationId: string): Promise<void> {
  await db
    .updateTable('messages')
    .set({ compacted_by: null })
    .where('namespace', '=', namespace)
    .where('conversation_id', '=', conversationId)
    .where('compacted_by', '=', operationId)
    .execute();
}

/** Update an existing operation's status and labels; its message ids and createdAt stay. */
export async function updateOperation(
  db: Kysely<Database>,
  context: StoreContext,
  update: Pick<CompactionOperation, 'id' | 'conversationId' | 'status' | 'labels'>,
): Promise<void> {
  const { id, conversationId } = requireOperationKeys(update);
  const labels = requireTextArray(update.labels, 'operation.labels');
  const result = await guard(`update operation ${id}`, () =>
    db
      .updateTable('compaction_operations')
      .set({ status: update.status, labels: JSON.stringify(labels), updated_at: context.clock().toISOString() })
      .where('id', '=', id)
      .where('namespace', '=', context.namespace)
      .where('conversation_id', '=', conversationId)
      .executeTakeFirst(),
  );
  if (Number(result.numUpdatedRows) !== 1) {
    throw new InvalidArgumentError('operation.id', `${JSON.stringify(id)} is not an operation of this conversation`);
  }
}

/**
 * An operation row as the store writes it; `mode` undefined: `delete` when inserted, the recorded one kept; `kind`
 * (`compaction` when undefined) is written when inserted only.
 */
export interface OperationRowWrite {
  id: string;
  conversationId: string;
  kind?: OperationKind;
  status: OperationStatus;
  mode: CompactionMode | undefined;
  messageIds: string[];
  labels: string[];
  error: string | null;
  /** Only a commit sets it; every other write leaves it null (a commit is an operation's last write). */
  usage?: OperationUsage | null;
}

/**
 * Insert an operation row, or update its status, ids, labels and error (createdAt, kind and mode stay the first write's).
 * Returns false when the id belongs to another conversation (an operation never moves) or, when `mode` is given, was
 * recorded in the other mode; `refusedOperationWrite` says which.
 */
export async function upsertOperationRow(db: Kysely<Database>, namespace: string, row: OperationRowWrite, now: string): Promise<boolean> {
  const written = await db
    .insertInto('compaction_operations')
    .values({
      id: row.id,
      namespace,
      conversation_id: row.conversationId,
      kind: row.kind ?? 'compaction',
      status: row.status,
      mode: row.mode ?? 'delete',
      message_ids: JSON.stringify(row.messageIds),
      labels: JSON.stringify(row.labels),
      error: row.error,
      usage: row.usage ? JSON.stringify(row.usage) : null,
      // An erase's boundary: the conversation's last committed seq as it is recorded (0 without a row); never updated.
      erase_through_seq:
        row.kind === 'erase'
          ? sql<number>`coalesce((select c.next_seq - 1 from conversations c where c.namespace = ${namespace} and c.id = ${row.conversationId}), 0)`
          : null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((conflict) => {
      const update = conflict
        .column('id')
        .doUpdateSet((eb) => ({
          status: eb.ref('excluded.status'),
          message_ids: eb.ref('excluded.message_ids'),
          labels: eb.ref('excluded.labels'),
          error: eb.ref('excluded.error'),
          usage: eb.ref('excluded.usage'),
          updated_at: now,
        }))
        .where('compaction_operations.namespace', '=', namespace)
        .where('compaction_operations.conversation_id', '=', row.conversationId);
      return row.mode === undefined ? update : update.where('compaction_operations.mode', '=', row.mode);
    })
    .returning('id')
    .executeTakeFirst();
  return written !== undefined;
}

/**
 * `upsertOperationRow` for an operation already recorded, leaving its message ids as stored: status, labels, error and
 * usage written. False when no row of that id, conversation and mode is there (the caller then upserts).
 */
export async function commitRecordedOperation(db: Kysely<Database>, namespace: string, row: OperationRowWrite, now: string): Promise<boolean> {
  let update = db
    .updateTable('compaction_operations')
    .set({
      status: row.status,
      labels: JSON.stringify(row.labels),
      error: row.error,
      usage: row.usage ? JSON.stringify(row.usage) : null,
      updated_at: now,
    })
    .where('id', '=', row.id)
    .where('namespace', '=', namespace)
    .where('conversation_id', '=', row.conversationId);
  if (row.mode !== undefined) update = update.where('mode', '=', row.mode);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Why `upsertOperationRow` refused `row`: the error naming the field (`fields.id` or `fields.mode`). */
export async function refusedOperationWrite(
  db: Kysely<Database>,
  namespace: string,
  row: Pick<OperationRowWrite, 'id' | 'conversationId' | 'mode'>,
  fields: { id: string; mode: string },
): Promise<InvalidArgumentError> {
  const recorded = await db.selectFrom('compaction_operations').select(['namespace', 'conversation_id', 'mode']).where('id', '=', row.id).executeTakeFirst();
  if (recorded !== undefined && recorded.namespace === namespace && recorded.conversation_id === row.conversationId && row.mode !== undefined) {
    return modeMismatch(fields.mode, row.id, recorded.mode as CompactionMode, row.mode);
  }
  return new InvalidArgumentError(fields.id, `${JSON.stringify(row.id)} belongs to another conversation or namespace`);
}

/** A conversation's operations, oldest first. */
export async function listOperations(db: Kysely<Database>, context: StoreContext, conversationId: string): Promise<CompactionOperation[]> {
  requireText(conversationId, 'conversationId');
  return guard(`list operations of conversation ${JSON.stringify(conversationId)}`, async () => {
    const rows = await db
      .selectFrom('compaction_operations')
      .selectAll()
      .where('namespace', '=', context.namespace)
      .where('conversation_id', '=', conversationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toOperation);
  });
}

/** Operations not yet committed or rolled back, oldest first; the whole namespace when no id is given. */
export async function listPendingOperations(db: Kysely<Database>, context: StoreContext, conversationId?: string): Promise<CompactionOperation[]> {
  if (conversationId !== undefined) requireText(conversationId, 'conversationId');
  return guard('list pending operations', async () => {
    let query = db.selectFrom('compaction_operations').selectAll().where('namespace', '=', context.namespace).where('status', 'in', ['planned', 'archived']);
    if (conversationId !== undefined) query = query.where('conversation_id', '=', conversationId);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map(toOperation);
  });
}

/** The namespace's conversations, most recently updated first; messageCount counts live messages (no clip-archive, no overlay rows). */
export async function listConversations(db: Kysely<Database>, context: StoreContext): Promise<Array<{ id: string; messageCount: number; updatedAt: string }>> {
  return guard('list conversations', async () => {
    const rows = await db
      .selectFrom('conversations as c')
      .select([
        'c.id',
        'c.updated_at',
        sql<string>`(select count(*) from messages m
          where m.namespace = c.namespace and m.conversation_id = c.id and m.kind = 'message' and m.compacted_by is null)`.as('message_count'),
      ])
      .where('c.namespace', '=', context.namespace)
      .orderBy('c.updated_at', 'desc')
      .orderBy('c.id')
      .execute();
    return rows.map((row) => ({ id: row.id, messageCount: Number(row.message_count), updatedAt: toIso(row.updated_at) }));
  });
}
