/**
 * Undo a failed operation's archive writes. When the undo itself fails, the operation goes back to
 * `planned` with the errors, so that reconcile (before the next compaction, or on open) removes what is left.
 */
import { errorMessage } from '../../errors.js';
import type { PersistenceProvider } from '../../persistence/persistence-provider.js';
import type { ArchiveWriter } from '../batches/archive-writer.js';

export interface UndoneOperation {
  operationId: string;
  conversationId: string;
  messageIds: string[];
}

/** Never throws: the failure being reported is `cause`, and reconcile finishes what this cannot. */
export async function undoOperation(input: {
  writer: ArchiveWriter;
  operation: UndoneOperation;
  persistence: PersistenceProvider;
  cause: string;
}): Promise<void> {
  const { writer, operation, persistence, cause } = input;
  const errors = await writer.rollback();
  const complete = errors.length === 0;
  const note = complete ? '' : `; undo incomplete, left for reconcile: ${errors.map(errorMessage).join('; ')}`;
  await persistence
    .recordOperation({
      id: operation.operationId,
      conversationId: operation.conversationId,
      status: complete ? 'rolled_back' : 'planned',
      messageIds: operation.messageIds,
      labels: [...writer.written],
      error: cause + note,
    })
    .catch(() => undefined);
}
