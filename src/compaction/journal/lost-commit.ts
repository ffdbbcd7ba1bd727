/**
 * A commit that reported an error may still have landed: the transaction committed and its acknowledgement was
 * lost (a connection dropped on COMMIT). Undoing the archive writes then would delete the only copy of messages the
 * live table no longer holds. The journal says which: the commit records the operation `committed` in its own
 * transaction.
 */
import type { PersistenceProvider } from '../../persistence/persistence-provider.js';

/** `true`: the commit landed; `false`: it did not (undo is safe); `undefined`: the journal could not be read. */
export async function commitLanded(
  persistence: Pick<PersistenceProvider, 'listOperations'>,
  conversationId: string,
  operationId: string,
): Promise<boolean | undefined> {
  try {
    const operation = (await persistence.listOperations(conversationId)).find((op) => op.id === operationId);
    return operation?.status === 'committed';
  } catch {
    return undefined;
  }
}
