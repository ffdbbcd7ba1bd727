/** The compaction operations journal and the conversation listing over in-memory tables (`kysely/operation-log.ts`'s twin). */
import { InvalidArgumentError } from '../../errors.js';
import { requireText, requireTextArray } from '../../conversation/text.js';
import type { CompactionMode, CompactionOperation, OperationRecordInput, OperationStatus } from '../persistence-provider.js';
import { modeMismatch, optionalCompactionMode } from '../compaction-mode.js';
import { requireOperationKind } from '../operation-kind.js';
import { conversationKey, copyOf, type InMemoryTables, type OperationRecord } from './in-memory-tables.js';

const STATUSES: ReadonlySet<string> = new Set<OperationStatus>(['planned', 'archived', 'committed', 'rolled_back']);

/**
 * An operation as written; `mode` undefined: `delete` when inserted, the recorded one kept; `kind` undefined:
 * `compaction` when inserted, the recorded one kept.
 */
type OperationRow = Omit<CompactionOperation, 'createdAt' | 'updatedAt' | 'mode' | 'eraseThroughSeq'> & { mode: CompactionMode | undefined };

function requireStatus(status: unknown): OperationStatus {
  if (!STATUSES.has(status as string)) {
    throw new InvalidArgumentError('operation.status', `must be one of ${[...STATUSES].join(', ')}; got ${JSON.stringify(status)}`);
  }
  return status as OperationStatus;
}

/** Who holds an operation id, if anyone, and the mode it was recorded in. */
export function operationOwner(tables: InMemoryTables, id: string): { namespace: string; conversationId: string; mode: CompactionMode } | undefined {
  const record = tables.operations.get(id);
  return record && { namespace: record.namespace, conversationId: record.operation.conversationId, mode: record.operation.mode };
}

/**
 * The error for writing `row` over the operation recorded under its id, or undefined when the write may go ahead: the
 * id belongs to another conversation or namespace (`fields.id`), or the write names another mode (`fields.mode`).
 */
export function operationWriteProblem(
  tables: InMemoryTables,
  namespace: string,
  row: Pick<OperationRow, 'id' | 'conversationId' | 'mode'>,
  fields: { id: string; mode: string },
): InvalidArgumentError | undefined {
  const owner = operationOwner(tables, row.id);
  if (owner === undefined) return undefined;
  if (owner.namespace !== namespace || owner.conversationId !== row.conversationId) {
    return new InvalidArgumentError(fields.id, `${JSON.stringify(row.id)} belongs to another conversation or namespace`);
  }
  return row.mode !== undefined && row.mode !== owner.mode ? modeMismatch(fields.mode, row.id, owner.mode, row.mode) : undefined;
}

/**
 * Insert the operation, or update its status, ids, labels and error (createdAt, kind and mode stay the first write's).
 * The caller has checked the write (`operationWriteProblem`).
 */
export function upsertOperation(tables: InMemoryTables, namespace: string, row: OperationRow, now: string): void {
  const existing = tables.operations.get(row.id);
  const kind = existing?.operation.kind ?? row.kind ?? 'compaction';
  const operation: CompactionOperation = {
    ...copyOf(row),
    kind,
    mode: existing?.operation.mode ?? row.mode ?? 'delete',
    createdAt: existing?.operation.createdAt ?? now,
    updatedAt: now,
  };
  if (row.error === undefined) delete operation.error;
  if (row.usage === undefined) delete operation.usage;
  // An erase's boundary: the conversation's last seq when it is first recorded (the SQL store's erase_through_seq).
  const boundary =
    existing?.operation.eraseThroughSeq ?? (existing === undefined && kind === 'erase' ? lastSeq(tables, namespace, row.conversationId) : undefined);
  if (boundary !== undefined) operation.eraseThroughSeq = boundary;
  tables.operations.set(row.id, { namespace, order: existing?.order ?? tables.nextOperationOrder++, operation });
}

function lastSeq(tables: InMemoryTables, namespace: string, conversationId: string): number {
  return (tables.conversations.get(conversationKey(namespace, conversationId))?.nextSeq ?? 1) - 1;
}

/** Record the operation; a status other than committed clears its marks (both or neither: nothing awaits between). */
export function recordOperation(tables: InMemoryTables, namespace: string, input: OperationRecordInput, now: string): void {
  const id = requireText(input?.id, 'operation.id');
  const conversationId = requireText(input.conversationId, 'operation.conversationId');
  const status = requireStatus(input.status);
  const mode = optionalCompactionMode(input.mode, 'operation.mode');
  const kind = requireOperationKind(input.kind);
  const messageIds = requireTextArray(input.messageIds, 'operation.messageIds');
  const labels = requireTextArray(input.labels, 'operation.labels');
  const error = input.error === undefined ? undefined : requireText(input.error, 'operation.error', { allowEmpty: true });
  const problem = operationWriteProblem(tables, namespace, { id, conversationId, mode }, { id: 'operation.id', mode: 'operation.mode' });
  if (problem !== undefined) throw problem;
  upsertOperation(tables, namespace, { id, conversationId, kind, status, mode, messageIds, labels, ...(error === undefined ? {} : { error }) }, now);
  if (status === 'committed') return;
  for (const message of tables.conversations.get(conversationKey(namespace, conversationId))?.messages ?? []) {
    if (message.compactedBy === id) delete message.compactedBy;
  }
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

/** The namespace's conversations, most recently updated first; messageCount counts live messages (no clip-archive, no overlay rows). */
export function listConversations(tables: InMemoryTables, namespace: string): Array<{ id: string; messageCount: number; updatedAt: string }> {
  return [...tables.conversations.values()]
    .filter((record) => record.namespace === namespace)
    .sort((a, b) => (a.updatedAt > b.updatedAt ? -1 : a.updatedAt < b.updatedAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((record) => ({
      id: record.id,
      messageCount: record.messages.filter((m) => m.kind === 'message' && m.compactedBy === undefined).length,
      updatedAt: record.updatedAt,
    }));
}
