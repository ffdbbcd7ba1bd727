/** The compaction operations journal and the conversation listing over in-memory tables (`kysely/operation-log.ts`'s twin). */
import { InvalidArgumentError } from '../../errors.js';
import { requireText, requireTextArray } from '../../conversation/text.js';
import type { CompactionOperation, OperationStatus } from '../persistence-provider.js';
import { copyOf, type InMemoryTables, type OperationRecord } from './in-memory-tables.js';

const STATUSES: ReadonlySet<string> = new Set<OperationStatus>(['planned', 'archived', 'committed', 'rolled_back']);

type OperationRow = Omit<CompactionOperation, 'createdAt' | 'updatedAt'>;

function requireStatus(status: unknown): OperationStatus {
  if (!STATUSES.has(status as string)) {
    throw new InvalidArgumentError('operation.status', `must be one of ${[...STATUSES].join(', ')}; got ${JSON.stringify(status)}`);
  }
  return status as OperationStatus;
}

/** Who holds an operation id, if anyone. */
export function operationOwner(tables: InMemoryTables, id: string): { namespace: string; conversationId: string } | undefined {
  const record = tables.operations.get(id);
  return record && { namespace: record.namespace, conversationId: record.operation.conversationId };
}

/**
 * Insert the operation, or update its status, ids, labels and error (createdAt stays the first write's).
 * The caller has checked that the id is not another conversation's.
 */
export function upsertOperation(tables: InMemoryTables, namespace: string, row: OperationRow, now: string): void {
  const existing = tables.operations.get(row.id);
  const operation: CompactionOperation = { ...copyOf(row), createdAt: existing?.operation.createdAt ?? now, updatedAt: now };
  if (row.error === undefined) delete operation.error;
  tables.operations.set(row.id, { namespace, order: existing?.order ?? tables.nextOperationOrder++, operation });
}

export function recordOperation(tables: InMemoryTables, namespace: string, input: OperationRow, now: string): void {
  const id = requireText(input?.id, 'operation.id');
  const conversationId = requireText(input.conversationId, 'operation.conversationId');
  const status = requireStatus(input.status);
  const messageIds = requireTextArray(input.messageIds, 'operation.messageIds');
  const labels = requireTextArray(input.labels, 'operation.labels');
  const error = input.error === undefined ? undefined : requireText(input.error, 'operation.error', { allowEmpty: true });
  const owner = operationOwner(tables, id);
  if (owner !== undefined && (owner.namespace !== namespace || owner.conversationId !== conversationId)) {
    throw new InvalidArgumentError('operation.id', `${JSON.stringify(id)} belongs to another conversation or namespace`);
  }
  upsertOperation(tables, namespace, { id, conversationId, status, messageIds, labels, ...(error === undefined ? {} : { error }) }, now);
}

/** Move an existing operation's status and labels; its message ids, error and createdAt stay. */
export function updateOperation(
  tables: InMemoryTables,
  namespace: string,
  update: Pick<CompactionOperation, 'id' | 'conversationId' | 'status' | 'labels'>,
  now: string,
): void {
  const id = requireText(update?.id, 'operation.id');
  const conversationId = requireText(update.conversationId, 'operation.conversationId');
  const status = requireStatus(update.status);
  const labels = requireTextArray(update.labels, 'operation.labels');
  const record = tables.operations.get(id);
  if (record === undefined || record.namespace !== namespace || record.operation.conversationId !== conversationId) {
    throw new InvalidArgumentError('operation.id', `${JSON.stringify(id)} is not an operation of this conversation`);
  }
  record.operation = { ...record.operation, status, labels: [...labels], updatedAt: now };
}

const byAge = (a: OperationRecord, b: OperationRecord) =>
  a.operation.createdAt < b.operation.createdAt ? -1 : a.operation.createdAt > b.operation.createdAt ? 1 : a.order - b.order;

/** Operations of the namespace matching `keep`, oldest first. */
export function listOperations(tables: InMemoryTables, namespace: string, keep: (operation: CompactionOperation) => boolean): CompactionOperation[] {
  return [...tables.operations.values()]
    .filter((record) => record.namespace === namespace && keep(record.operation))
    .sort(byAge)
    .map((record) => copyOf(record.operation));
}

/** The namespace's conversations, most recently updated first; messageCount excludes the clip-archive. */
export function listConversations(tables: InMemoryTables, namespace: string): Array<{ id: string; messageCount: number; updatedAt: string }> {
  return [...tables.conversations.values()]
    .filter((record) => record.namespace === namespace)
    .sort((a, b) => (a.updatedAt > b.updatedAt ? -1 : a.updatedAt < b.updatedAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((record) => ({ id: record.id, messageCount: record.messages.filter((m) => m.kind === 'message').length, updatedAt: record.updatedAt }));
}
