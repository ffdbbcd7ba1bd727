/**
 * The members of the `Memfold` object (`memfold-api.ts`) that work on conversations, wired by `createMemfold`
 * (`memfold.ts`) to what it opened: append and read, compact, reconcile, export and erase, and close.
 */
import type { Archive } from './archive/archive.js';
import type { MemfoldBackground } from './background/memfold-background.js';
import type { Compactor, CompactOptions } from './compaction/compactor.js';
import { reconcileAll, type ReconcileOutcome } from './compaction/journal/reconcile.js';
import type { StoredSettings } from './compaction/stored-settings.js';
import { calibrationFactorOf } from './compaction/usage/conversation-counts.js';
import type { ContextWarnings } from './compaction/usage/context-warnings.js';
import { assembleContext, modelContext } from './compaction/view/context-view.js';
import { checkDurationMs } from './duration-ms.js';
import { eraseConversation } from './erase-export/erase-conversation.js';
import { exportConversation } from './erase-export/export-conversation.js';
import { InvalidConfigError } from './errors.js';
import type { Memfold } from './memfold-api.js';
import { type Closeable, closeAll } from './memfold-open.js';
import type { MemfoldEvent } from './memfold-options.js';
import type { PersistenceProvider } from './persistence/persistence-provider.js';
import type { TokenCounter } from './tokens/token-counter.js';

/** How long `close()` waits for compactions in flight: long enough for a few model calls, bounded for shutdown. */
const CLOSE_WAIT_MS = 30_000;

/** `reconcile`: one conversation through its compactor, or every unfinished operation, each reported. */
export function memfoldReconcile(deps: {
  archive: Archive;
  persistence: PersistenceProvider;
  compactor: Compactor;
  tokens: TokenCounter;
  contextWarnings: ContextWarnings;
  emit: (event: MemfoldEvent) => void;
}): Memfold['reconcile'] {
  const { archive, persistence, compactor, tokens, contextWarnings, emit } = deps;
  return async (conversationId?: string): Promise<ReconcileOutcome[]> => {
    if (conversationId !== undefined) return compactor.reconcile(conversationId);
    const outcomes = await reconcileAll({ archive, persistence, settings: compactor.settings, tokens });
    for (const outcome of outcomes) {
      if (outcome.action === 'committed') contextWarnings.changed(outcome.conversationId);
      emit({ type: 'reconciled', ...outcome });
    }
    return outcomes;
  };
}

type ConversationMethods = Pick<Memfold, 'append' | 'history' | 'pin' | 'unpin' | 'context' | 'usage' | 'observeUsage' | 'compact'>;

/** Appending and reading a conversation, and compacting it now or in the background. */
export function conversationMethods(deps: {
  persistence: PersistenceProvider;
  compactor: Compactor;
  stored: StoredSettings;
  contextWarnings: ContextWarnings;
  background: MemfoldBackground;
}): ConversationMethods {
  const { persistence, compactor, stored, contextWarnings, background } = deps;
  return {
    async append(conversationId, messages) {
      // Its warning mark and background queueing follow the stored settings: read once in this process, and again
      // by every compaction, usage and context.
      await stored.ensure(conversationId);
      const appended = await persistence.append(conversationId, messages);
      const tokens = await contextWarnings.appended(conversationId, appended, async () => ({
        history: await persistence.loadHistory(conversationId),
        factor: await calibrationFactorOf(persistence, conversationId),
      }));
      await background.appended(conversationId, tokens);
      return appended;
    },
    history: async (conversationId, historyOptions) => assembleContext(await persistence.loadHistory(conversationId, historyOptions)),
    pin: (conversationId, messageIds) => persistence.setPinned(conversationId, messageIds, true),
    unpin: (conversationId, messageIds) => persistence.setPinned(conversationId, messageIds, false),
    async context(conversationId) {
      await stored.refresh(conversationId);
      await background.beforeContext(conversationId);
      return modelContext(await persistence.loadHistory(conversationId), compactor.settingsOf(conversationId));
    },
    usage: (conversationId) => compactor.usage(conversationId),
    observeUsage: (conversationId, usage) => compactor.observeUsage(conversationId, usage),
    compact: ((conversationId: string, compactOptions?: CompactOptions & { background?: boolean }) => {
      // The job carries the conversation's settings as stored now.
      if (compactOptions?.background === true) return stored.refresh(conversationId).then(() => background.enqueue(conversationId));
      const { background: _, ...rest } = compactOptions ?? {};
      return compactor.compactStored(conversationId, rest);
    }) as Memfold['compact'],
  };
}

/** Listing, exporting and erasing conversations. */
export function conversationRecords(deps: {
  archive: Archive;
  persistence: PersistenceProvider;
  namespace: string;
  contextWarnings: ContextWarnings;
  tokensAfterCompaction: Map<string, number>;
}): Pick<Memfold, 'listConversations' | 'exportConversation' | 'eraseConversation'> {
  const { archive, persistence, namespace, contextWarnings, tokensAfterCompaction } = deps;
  return {
    listConversations: () => persistence.listConversations(),
    exportConversation: (conversationId) => exportConversation({ archive, persistence, namespace }, conversationId),
    async eraseConversation(conversationId, eraseOptions) {
      const result = await eraseConversation({ archive, persistence }, conversationId, eraseOptions);
      // This process's running counts of the conversation describe rows that are gone.
      contextWarnings.changed(conversationId, 0);
      tokensAfterCompaction.delete(conversationId);
      return result;
    },
  };
}

/** `close()`: the background first, then the compactions in flight, within one wait; then what was opened. */
export function memfoldClose(deps: {
  background: MemfoldBackground;
  compactors: ReadonlyArray<Compactor>;
  opened: ReadonlyArray<Closeable>;
}): Memfold['close'] {
  const { background, compactors, opened } = deps;
  return async (closeOptions = {}) => {
    const waitMs = checkDurationMs(closeOptions.waitMs ?? CLOSE_WAIT_MS, 'waitMs', { toError: (field, rule) => new InvalidConfigError(field, rule) });
    const started = Date.now();
    await background.close(waitMs);
    const left = Math.max(0, waitMs - (Date.now() - started));
    await Promise.all(compactors.map((compactor) => compactor.drain(left)));
    await closeAll(opened);
  };
}
