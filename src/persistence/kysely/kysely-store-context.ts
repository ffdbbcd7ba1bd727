/** What every Kysely store operation needs besides the handle: the store's namespace, clock and size limit. */
import type { HeldLock } from './kysely-conversation-lock.js';

export interface StoreContext {
  namespace: string;
  clock: () => Date;
  /** UTF-8 bytes one appended message may take (validated by the store). */
  maxMessageBytes: number;
  /** The conversation's lock the calling async context holds on PostgreSQL, which a commit re-checks; else undefined. */
  heldLock?: (conversationId: string) => HeldLock | undefined;
}
