/** The compaction operations log and the conversation listing: the store's bookkeeping queries. */
import { sql, type Kysely } from 'kysely';
import { InvalidArgumentError } from '../../errors.js';
import type { CompactionOperation, OperationStatus } from '../persistence-provider.js';
import { guard } from '../persistence-error.js';
import { requireText, requireTextArray } from '../../conversation/text.js';
import { toIso, toOperation } from './kysely-row-mapping.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';

const STATUSES: ReadonlySet<string> = new Set<OperationStatus>(['planned', 'archived', 'committed', 'rolled_back']);

/** Insert the operation, or update its status, ids, labels and error; createdAt stays the first write's. */
/** The id, conversation and status every write of an operation names, checked. */
function requireOperationKeys(operation: Pick<CompactionOperation, 'id' | 'conversationId' | 'status'>): { id: string; conversationId: string } {
  const id = requireText(operation?.id, 'operation.id');
  const conversationId = requireText(operation.conversationId, 'operation.conversationId');
  if (!STATUSES.has(operation.status)) {
    throw new InvalidArgumentError('operation.status', `must be one of ${[...STATUSES].join(', ')}; got ${JSON.stringify(operation.status)}`);
  }
  return { id, conversationId };
}

export async function recordOperation(
  db: Kysely<Database>,
  context: StoreContext,
  operation: Omit<CompactionOperation, 'createdAt' | 'updatedAt'>,
): Promise<void> {
  const { id, conversationId } = requireOperationKeys(operation);
  const messageIds = requireTextArray(operation.messageIds, 'operation.messageIds');
  const labels = requireTextArray(operation.labels, 'operation.labels');
  const error = operation.error === undefined ? null : requireText(operation.error, 'operation.error', { allowEmpty: true });
  const applied = await guard(`record operation ${id}`, () =>
    upsertOperationRow(db, context.namespace, { id, conversationId, status: operation.status, messageIds, labels, error }, context.clock().toISOString()),
  );
  if (!applied) {
    throw new InvalidArgumentError('operation.id', `${JSON.stringify(id)} belongs to another conversation or namespace`);
  }
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
 * Insert an operation row, or update its status, ids, labels and error (createdAt stays the first
 * write's). Returns false when the id belongs to another conversation: an operation never moves.
 */
export async function upsertOperationRow(
  db: Kysely<Database>,
  namespace: string,
  row: { id: string; conversationId: string; status: OperationStatus; messageIds: string[]; labels: string[]; error: string | null },
  now: string,
): Promise<boolean> {
  const written = await db
    .insertInto('compaction_operations')
    .values({
      id: row.id,
      namespace,
      conversation_id: row.conversationId,
      status: row.status,
      message_ids: JSON.stringify(row.messageIds),
      labels: JSON.stringify(row.labels),
      error: row.error,
      created_at: now,
      updated_at: now,
    })
    .onConflict((conflict) =>
      conflict
        .column('id')
        .doUpdateSet((eb) => ({
          status: eb.ref('excluded.status'),
          message_ids: eb.ref('excluded.message_ids'),
          labels: eb.ref('excluded.labels'),
          error: eb.ref('excluded.error'),
          updated_at: now,
        }))
        .where('compaction_operations.namespace', '=', namespace)
        .where('compaction_operations.conversation_id', '=', row.conversationId),
    )
    .returning('id')
    .executeTakeFirst();
  return written !== undefined;
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

/** The namespace's conversations, most recently updated first; messageCount excludes the clip-archive. */
export async function listConversations(db: Kysely<Database>, context: StoreContext): Promise<Array<{ id: string; messageCount: number; updatedAt: string }>> {
  return guard('list conversations', async () => {
    const rows = await db
      .selectFrom('conversations as c')
      .select([
        'c.id',
        'c.updated_at',
        sql<string>`(select count(*) from messages m
          where m.namespace = c.namespace and m.conversation_id = c.id and m.kind = 'message')`.as('message_count'),
      ])
      .where('c.namespace', '=', context.namespace)
      .orderBy('c.updated_at', 'desc')
      .orderBy('c.id')
      .execute();
    return rows.map((row) => ({ id: row.id, messageCount: Number(row.message_count), updatedAt: toIso(row.updated_at) }));
  });
}
