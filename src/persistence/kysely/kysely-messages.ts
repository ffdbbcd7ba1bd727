/**
 * The message-table operations of the port, written once against a Kysely handle: the store calls
 * them on the pool (each opening its own transaction) and `transaction()` on its Kysely transaction.
 */
import type { Kysely } from 'kysely';
import type { ConversationMessage, NewMessage } from '../../conversation/types.js';
import { requireConversationId } from '../../conversation/conversation-id.js';
import { requireTextArray } from '../../conversation/text.js';
import { InvalidArgumentError } from '../../errors.js';
import { checkBatchIds } from '../append-batch-checks.js';
import { checkCommitClearing } from '../clearing-checks.js';
import { clipArchiveId } from '../clip-archive-id.js';
import { checkCommit } from '../commit-input.js';
import { requireCountLiveOptions, requirePinnedFlag } from '../count-live-options.js';
import { normalizeNewMessages } from '../normalize-new-messages.js';
import { guard } from '../persistence-error.js';
import type {
  CommitClearing,
  CommitCompaction,
  CommitReport,
  CountLiveOptions,
  LiveCounts,
  LoadHistoryOptions,
  PersistenceTransaction,
  UsedId,
} from '../persistence-provider.js';
import { checkAgainstStored, findUsedIds } from './kysely-append-checks.js';
import { commitClearingIn, commitCompactionIn } from './kysely-commits.js';
import {
  countLiveAndClearedRows,
  countLiveRows,
  deleteLive,
  insertMessages,
  selectHistory,
  setPinnedRows,
  touchConversation,
  type InConversation,
} from './kysely-message-rows.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';
import { inTransaction } from './kysely-transaction.js';

export { clipArchiveId };
export { inTransaction };

/**
 * The port's PersistenceTransaction over `db`. Multi-statement operations (append, deleteByIds,
 * commitCompaction) open their own transaction on a pool handle and join the caller's on a transaction handle.
 */
export function kyselyMessageOperations(db: Kysely<Database>, context: StoreContext): PersistenceTransaction {
  const { namespace, clock, maxMessageBytes } = context;
  const named = (conversationId: string) => JSON.stringify(conversationId);
  /** `work` in a transaction, for one conversation. */
  const within = <T>(conversationId: string, work: (at: InConversation) => Promise<T>) => inTransaction(db, (trx) => work({ trx, context, conversationId }));

  return {
    async append(conversationId: string, messages: NewMessage[]): Promise<ConversationMessage[]> {
      requireConversationId(conversationId);
      const rows = normalizeNewMessages(messages, { maxMessageBytes });
      checkBatchIds(rows, clipArchiveId(conversationId));
      if (rows.length === 0) return [];
      return guard(`append to conversation ${named(conversationId)}`, () =>
        within(conversationId, async (at) => {
          // The upsert locks the conversation row, so concurrent appends take turns and get contiguous seqs.
          const first = await touchConversation(at, rows.length);
          // A default time is read under the conversation's row lock, so default times follow seq order
          // even when appends race.
          const now = clock().toISOString();
          // A refusal here rolls back the upsert above: nothing of the batch is written.
          await checkAgainstStored(at.trx, { namespace, conversationId }, rows);
          return insertMessages(at, { rows, first, now });
        }),
      );
    },

    async deleteByIds(conversationId: string, ids: string[]): Promise<number> {
      requireConversationId(conversationId);
      const wanted = requireTextArray(ids, 'ids');
      return guard(`delete messages of conversation ${named(conversationId)}`, () => within(conversationId, (at) => deleteLive(at, wanted)));
    },

    async findUsedIds(conversationId: string, ids: string[]): Promise<UsedId[]> {
      requireConversationId(conversationId);
      const wanted = requireTextArray(ids, 'ids');
      return guard(`look up used ids of conversation ${named(conversationId)}`, () => findUsedIds(db, { namespace, conversationId }, wanted));
    },

    async loadHistory(conversationId: string, options: LoadHistoryOptions = {}): Promise<ConversationMessage[]> {
      requireConversationId(conversationId);
      const includeCompacted = options?.includeCompacted ?? false;
      if (typeof includeCompacted !== 'boolean') throw new InvalidArgumentError('options.includeCompacted', 'must be a boolean');
      return guard(`load conversation ${named(conversationId)}`, () => selectHistory({ trx: db, context, conversationId }, includeCompacted));
    },

    async countLive(conversationId: string, ids: string[], options: CountLiveOptions = {}): Promise<number> {
      requireConversationId(conversationId);
      const wanted = requireTextArray(ids, 'ids');
      const clearedOnly = requireCountLiveOptions(options);
      if (wanted.length === 0) return 0;
      return guard(`count live messages of conversation ${named(conversationId)}`, () =>
        countLiveRows({ trx: db, context, conversationId }, wanted, clearedOnly),
      );
    },

    async countLiveAndCleared(conversationId: string, ids: string[]): Promise<LiveCounts> {
      requireConversationId(conversationId);
      const wanted = requireTextArray(ids, 'ids');
      if (wanted.length === 0) return { live: 0, cleared: 0 };
      return guard(`count live messages of conversation ${named(conversationId)}`, () => countLiveAndClearedRows({ trx: db, context, conversationId }, wanted));
    },

    async setPinned(conversationId: string, ids: string[], pinned: boolean): Promise<number> {
      requireConversationId(conversationId);
      const wanted = requireTextArray(ids, 'ids');
      requirePinnedFlag(pinned);
      return guard(`pin messages of conversation ${named(conversationId)}`, () => setPinnedRows({ trx: db, context, conversationId }, wanted, pinned));
    },

    async commitCompaction(commit: CommitCompaction): Promise<CommitReport> {
      const checked = checkCommit(commit);
      const { conversationId, operationId } = checked;
      return guard(`commit compaction ${operationId} of conversation ${named(conversationId)}`, () =>
        within(conversationId, (at) => commitCompactionIn(at, checked)),
      );
    },

    async commitClearing(input: CommitClearing): Promise<ConversationMessage[]> {
      const checked = checkCommitClearing(input);
      const { conversationId, operationId } = checked;
      return guard(`commit clearing ${operationId} of conversation ${named(conversationId)}`, () =>
        within(conversationId, (at) => commitClearingIn(at, checked)),
      );
    },
  };
}
