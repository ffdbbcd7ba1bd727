/**
 * The composition root: reads the configuration, opens the adapters and wires them to the ports.
 * With no options and no environment it runs on the embedded default: PGlite and LanceDB under
 * ./.memfold, the extractive summarizer and the hashing embedder.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createCompactor, type Compactor, type CompactOptions } from './compaction/compactor.js';
import { summarizerInputBudget } from './compaction/fold/summarizer-budget.js';
import { calibrationFactorOf } from './compaction/usage/conversation-counts.js';
import { createContextWarnings } from './compaction/usage/context-warnings.js';
import { reconcileAll, type ReconcileOutcome } from './compaction/journal/reconcile.js';
import { eraseConversation } from './erase-export/erase-conversation.js';
import { exportConversation } from './erase-export/export-conversation.js';
import { errorMessage, failureReason, InvalidConfigError, MemfoldError } from './errors.js';
import { checkDurationMs } from './duration-ms.js';
import { assembleContext, modelContext } from './compaction/view/context-view.js';
import { createLiveSettings } from './compaction/live-settings.js';
import { createStoredSettings, type StoredSettings } from './compaction/stored-settings.js';
import { withStoredSettings } from './compaction/stored-settings-compactor.js';
import { memfoldSettings } from './memfold-settings.js';
import { resolveRuntimeConfig, type RuntimeConfig } from './config.js';
import { archiveBindingCheck, buildEmbedder, buildSummarizer, openCheckedArchive, openPersistence, remoteCallQueue } from './configured-adapters.js';
import { createInMemoryArchive } from './archive/in-memory/in-memory-archive.js';
import type { Archive } from './archive/archive.js';
import { chooseSummaryModel, type SummaryModelChoice } from './openai/summary-model.js';
import { createInMemoryPersistence } from './persistence/in-memory/in-memory-persistence.js';
import type { LoadHistoryOptions, PersistenceProvider } from './persistence/persistence-provider.js';
import { createTokenCounter } from './tokens/create-token-counter.js';
import { resolvePrices } from './cost/resolve-prices.js';
import { createMemoryReadTool } from './tools/memory-read.js';
import { createCompactTool } from './tools/compact-tool.js';
import { type MemfoldEvent, type MemfoldOptions, resolveMemfoldOptions } from './memfold-options.js';
import { memfoldBackground } from './background/memfold-background.js';
import { createExtractiveSummarizer } from './summarizer/extractive/extractive-summarizer.js';
import type { Memfold } from './memfold-api.js';

export type { MemfoldEvent, MemfoldOptions, MemfoldWarningEvent } from './memfold-options.js';
export type { ConversationScope, ConversationSettings } from './memfold-settings.js';
export type { ConversationListing, Memfold } from './memfold-api.js';

/** How long `close()` waits for compactions in flight: long enough for a few model calls, bounded for shutdown. */
const CLOSE_WAIT_MS = 30_000;

/** The line memory_read adds when its search could not use vectors. */
function vectorSearchNote(reasons: ReadonlySet<string>): string {
  return `Note: vector search was unavailable (${[...reasons].join('; ')}), so these results come from full-text search only.`;
}

/** Close what was opened, newest first, keeping the first error. */
async function closeAll(opened: ReadonlyArray<{ close(): Promise<void> }>): Promise<void> {
  const errors: unknown[] = [];
  for (const store of [...opened].reverse()) await store.close().catch((e: unknown) => errors.push(e));
  if (errors.length > 0) throw errors[0];
}

/**
 * Whether the live store is a PostgreSQL database that other memfold processes may share, so the model rate limit
 * is kept there: the configured database (not PGlite, which one process owns, nor the memory store), or a
 * PostgreSQL store passed in that can reserve slots.
 */
function sharesRateLimit(options: MemfoldOptions, config: RuntimeConfig): boolean {
  if (options.persistence) return options.persistence.backend === 'postgres' && typeof options.persistence.reserveRateSlot === 'function';
  return options.store !== 'memory' && config.databaseUrl !== undefined;
}

function storeNotOpen(): MemfoldError {
  return new MemfoldError('persistence_error', 'the live store is not open yet, so no rate-limit slot can be reserved');
}

export async function createMemfold(given: MemfoldOptions = {}): Promise<Memfold> {
  // Everything is checked before anything opens: a bad setting must not leave a store open (PGlite's lock).
  const options = resolveMemfoldOptions(given);
  const config = resolveRuntimeConfig(options.config, options.env ?? process.env);
  const prices = resolvePrices(options.prices);
  // Resolved (and so validated) before anything opens; `configure` changes them later.
  const liveSettings = createLiveSettings(options.compaction);
  // With PostgreSQL the model rate limit is shared by every process on the database: its slots are reserved there,
  // through the store opened below (requests only start after opening).
  let reserveRateSlot: PersistenceProvider['reserveRateSlot'];
  const sharedRateLimit = config.modelRequestsPerMinute !== undefined && sharesRateLimit(options, config);
  const queue = remoteCallQueue(
    config,
    sharedRateLimit ? (key, intervalMs) => (reserveRateSlot ? reserveRateSlot(key, intervalMs) : Promise.reject(storeNotOpen())) : undefined,
  );
  const summaryModel: SummaryModelChoice = options.summarizer ? { source: 'adapter' } : chooseSummaryModel(config);
  const summarizer = options.summarizer ?? buildSummarizer(config, summaryModel, queue, options.prompt, options.promptMode ?? config.summaryPromptMode);
  const tokens = options.tokens ?? createTokenCounter(config.assistantModel ? { model: config.assistantModel } : {});
  const embedder = options.archive ? undefined : (options.embedder ?? buildEmbedder(config, queue));
  /** The context's tokens after each conversation's last compaction in this process (the compact tool's refusal). */
  const tokensAfterCompaction = new Map<string, number>();
  const emit = (event: MemfoldEvent) => {
    if (event.type === 'compaction_ended' && event.status === 'compacted') tokensAfterCompaction.set(event.conversationId, event.tokensAfter);
    options.onEvent?.(event);
  };
  // One tracker of context_warning crossings for append and compaction, so a crossing is reported once.
  const contextWarnings = createContextWarnings({
    settingsOf: (conversationId) => liveSettings.of(conversationId),
    countMessage: (message) => tokens.countMessage(message),
    emit,
  });

  /** Reasons vector search was unavailable, collected per memory_read call (see `memoryRead`). */
  const vectorNotes = new AsyncLocalStorage<Set<string>>();
  const onArchiveWarning = (message: string, error: unknown): void => {
    if (MemfoldError.isInstance(error) && error.code === 'embedding_error') {
      vectorNotes.getStore()?.add(`${embedder?.id ?? 'embedder'}: ${failureReason(error)}`);
      emit({ type: 'warning', code: 'vector_search_unavailable', message });
    } else {
      emit({ type: 'warning', code: 'archive_warning', message });
    }
  };

  /** What this call opened (never the adapters passed in), closed again if opening fails part-way. */
  const opened: Array<{ close(): Promise<void> }> = [];
  let persistence: PersistenceProvider;
  let archive: Archive;
  let compactor: Compactor;
  /** The same pipeline with the offline summarizer: the hard-window fallback of background mode, in the caller's turn. */
  let offlineCompactor: Compactor;
  /** Each conversation's overrides in the live store, read before every compaction plans. */
  let stored: StoredSettings;
  try {
    const inMemory = options.store === 'memory';
    /** A store createMemfold opened itself: closed on failure and by close(). */
    const own = <T extends { close(): Promise<void> }>(store: T): T => {
      opened.push(store);
      return store;
    };
    if (options.persistence) persistence = options.persistence;
    else if (inMemory) persistence = own(createInMemoryPersistence({ namespace: config.namespace, maxMessageBytes: config.maxMessageBytes }));
    else persistence = own(await openPersistence(config, options.migrate));
    if (sharedRateLimit) reserveRateSlot = persistence.reserveRateSlot?.bind(persistence);
    if (options.archive) archive = options.archive;
    else if (inMemory) archive = own(createInMemoryArchive({ embedder: embedder!, namespace: config.namespace, onWarning: onArchiveWarning }));
    else {
      const check = archiveBindingCheck(config, persistence, { write: options.migrate, adopt: options.adoptArchive });
      archive = own(await openCheckedArchive(config, embedder!, onArchiveWarning, check));
    }
    const pipeline = { archive, persistence, tokens, liveSettings, contextWarnings, onEvent: emit, prices };
    // Stored overrides that leave the summarizer no room are refused, as `configure` refuses them.
    stored = createStoredSettings({ live: liveSettings, store: persistence, check: (settings) => void summarizerInputBudget(summarizer, tokens, settings) });
    compactor = withStoredSettings(createCompactor({ ...pipeline, summarizer, ...(options.hooks ? { hooks: options.hooks } : {}) }), stored);
    offlineCompactor = withStoredSettings(createCompactor({ ...pipeline, summarizer: createExtractiveSummarizer() }), stored);
  } catch (error) {
    await closeAll(opened).catch(() => undefined); // the opening error is the one to report
    throw error;
  }

  const reconcile = async (conversationId?: string): Promise<ReconcileOutcome[]> => {
    if (conversationId !== undefined) return compactor.reconcile(conversationId);
    const outcomes = await reconcileAll({ archive, persistence, settings: compactor.settings, tokens });
    for (const outcome of outcomes) {
      if (outcome.action === 'committed') contextWarnings.changed(outcome.conversationId);
      emit({ type: 'reconciled', ...outcome });
    }
    return outcomes;
  };
  if (options.reconcileOnOpen) {
    try {
      await reconcile();
    } catch (error) {
      // Nothing is lost by waiting: the messages of an unfinished operation are still live, and the
      // next compaction of that conversation reconciles first. Opening must not fail on it.
      emit({ type: 'reconcile_failed', error: errorMessage(error) });
    }
  }

  const background = memfoldBackground({
    databaseUrl: options.store === 'memory' || options.persistence ? undefined : config.databaseUrl,
    namespace: config.namespace,
    jobs: { retryLimit: config.jobRetries, heartbeatSeconds: config.jobHeartbeatSeconds, superviseIntervalSeconds: config.jobSuperviseSeconds },
    compact: (conversationId) => compactor.compactStored(conversationId, { wait: true }),
    compactNow: (conversationId) => offlineCompactor.compactStored(conversationId, { wait: true }),
    settingsOf: (conversationId) => compactor.settingsOf(conversationId),
    usage: (conversationId) => compactor.usage(conversationId),
    forgetCount: (conversationId) => contextWarnings.changed(conversationId),
    emit,
  });

  const history = async (conversationId: string, historyOptions?: LoadHistoryOptions) =>
    assembleContext(await persistence.loadHistory(conversationId, historyOptions));
  return {
    config,
    compactor,
    persistence,
    archive,
    summarizer,
    summaryModel,
    tokens,
    prices,
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
    history,
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
    reconcile,
    listConversations: () => persistence.listConversations(),
    exportConversation: (conversationId) => exportConversation({ archive, persistence, namespace: config.namespace }, conversationId),
    async eraseConversation(conversationId, eraseOptions) {
      const result = await eraseConversation({ archive, persistence }, conversationId, eraseOptions);
      // This process's running counts of the conversation describe rows that are gone.
      contextWarnings.changed(conversationId, 0);
      tokensAfterCompaction.delete(conversationId);
      return result;
    },
    memoryRead(conversationId) {
      const tool = createMemoryReadTool(archive, conversationId, {
        maxTokens: options.memoryReadTokens,
        countTokens: (text) => tokens.count(text),
        live: () => persistence.loadHistory(conversationId),
      });
      return {
        definition: tool.definition,
        definitionFor: tool.definitionFor,
        // The archive reports a failed embedder through onWarning, from inside the search this call runs:
        // the async context ties the report to this call, so concurrent calls never see each other's notes.
        async execute(args, asked) {
          const reasons = new Set<string>();
          const result = await vectorNotes.run(reasons, () => tool.execute(args, asked));
          return reasons.size === 0 ? result : { ...result, output: `${result.output}\n\n${vectorSearchNote(reasons)}` };
        },
      };
    },
    ...(memfoldSettings(compactor, stored) as Pick<Memfold, 'configure' | 'conversationSettings' | 'resetSettings'>),
    compactTool(conversationId, limits = {}) {
      // Read when the tool runs, after its usage brought the stored settings in.
      const settingsLimits = () => {
        const { targetTokens, minFreedTokens } = compactor.settingsOf(conversationId);
        return { floorTokens: limits.floorTokens ?? targetTokens, minNewTokens: limits.minNewTokens ?? minFreedTokens };
      };
      return createCompactTool(
        {
          usage: (id) => compactor.usage(id),
          compact: (id, compactOptions) => compactor.compactStored(id, compactOptions),
          tokensAfterLastCompaction: (id) => tokensAfterCompaction.get(id),
        },
        conversationId,
        settingsLimits,
      );
    },
    async close(closeOptions = {}) {
      const waitMs = checkDurationMs(closeOptions.waitMs ?? CLOSE_WAIT_MS, 'waitMs', { toError: (field, rule) => new InvalidConfigError(field, rule) });
      const started = Date.now();
      await background.close(waitMs);
      const left = Math.max(0, waitMs - (Date.now() - started));
      await Promise.all([compactor.drain(left), offlineCompactor.drain(left)]);
      await closeAll(opened);
    },
  };
}
