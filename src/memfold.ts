/**
 * The composition root: reads the configuration, opens the adapters and wires them to the ports.
 * With no options and no environment it runs on the embedded default: PGlite and LanceDB under
 * ./.memfold, the extractive summarizer and the hashing embedder.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ConversationMessage, NewMessage } from './conversation/types.js';
import { createCompactor, type Compactor, type CompactOptions, type ContextUsage, type UsageObservation } from './compaction/compactor.js';
import { calibrationFactorOf } from './compaction/usage/conversation-counts.js';
import { createContextWarnings } from './compaction/usage/context-warnings.js';
import type { CompactionResult } from './compaction/compaction-result.js';
import { reconcileAll, type ReconcileOutcome } from './compaction/journal/reconcile.js';
import { eraseConversation, type EraseOptions, type EraseResult } from './erase-export/erase-conversation.js';
import { exportConversation, type ExportRecord } from './erase-export/export-conversation.js';
import { errorMessage, failureReason, InvalidConfigError, MemfoldError } from './errors.js';
import { checkDurationMs } from './duration-ms.js';
import { assembleContext, modelContext } from './compaction/view/context-view.js';
import type { CompactionSettings } from './compaction/compaction-settings.js';
import { createLiveSettings, type SettingsChange } from './compaction/live-settings.js';
import { resolveRuntimeConfig, type RuntimeConfig } from './config.js';
import { archiveBindingCheck, buildEmbedder, buildSummarizer, openCheckedArchive, openPersistence, remoteCallQueue } from './configured-adapters.js';
import { createInMemoryArchive } from './archive/in-memory/in-memory-archive.js';
import type { Archive } from './archive/archive.js';
import type { Summarizer } from './summarizer/summarizer.js';
import { chooseSummaryModel, type SummaryModelChoice } from './openai/summary-model.js';
import { createInMemoryPersistence } from './persistence/in-memory/in-memory-persistence.js';
import type { LoadHistoryOptions, PersistenceProvider, TokenCalibration } from './persistence/persistence-provider.js';
import { createTokenCounter } from './tokens/create-token-counter.js';
import type { PriceTable } from './cost/model-price.js';
import { resolvePrices } from './cost/resolve-prices.js';
import type { TokenCounter } from './tokens/token-counter.js';
import { createMemoryReadTool, type MemoryReadTool } from './tools/memory-read.js';
import { createCompactTool, type CompactTool, type CompactToolLimits } from './tools/compact-tool.js';
import { checkOptions, type MemfoldEvent, type MemfoldOptions } from './memfold-options.js';
import { memfoldBackground } from './background/memfold-background.js';
import type { EnqueueResult } from './background/compaction-queue.js';
import { createExtractiveSummarizer } from './summarizer/extractive/extractive-summarizer.js';

export type { MemfoldEvent, MemfoldOptions, MemfoldWarningEvent } from './memfold-options.js';

export interface Memfold {
  readonly config: RuntimeConfig;
  readonly compactor: Compactor;
  readonly persistence: PersistenceProvider;
  readonly archive: Archive;
  readonly summarizer: Summarizer;
  /**
   * Which model writes the summaries and why (`openai/summary-model.ts`): `summary_model` (MEMFOLD_SUMMARY_MODEL),
   * `provider_default` (a cheap model of the endpoint's provider), `assistant_model` (MEMFOLD_MODEL), `offline` (the
   * extractive summarizer), or `adapter` (a `summarizer` passed in). Each result's `models` says who answered.
   */
  readonly summaryModel: SummaryModelChoice;
  readonly tokens: TokenCounter;
  /** The price table results are priced with: `DEFAULT_PRICES` with `prices` merged in. */
  readonly prices: PriceTable;
  /**
   * Append messages to the live table; returns them as stored (ids, seq, times). Emits `context_warning` when the
   * conversation's context reaches `warnAt` × window and was below it when last seen (once per crossing). It keeps
   * a running count per conversation: the first append of a conversation in this process, and the first after its
   * live rows changed otherwise (a compaction), loads the history once to start it; the others count only their
   * own messages.
   */
  append(conversationId: string, messages: NewMessage[]): Promise<ConversationMessage[]>;
  /**
   * The live rows: system prompt, clip-archive, then the rest in order. With `includeCompacted`, also the rows overlay
   * compactions (`compaction.mode: 'overlay'`) kept, in their seq places, each with `compactedBy`: the full history as
   * the live table holds it.
   */
  history(conversationId: string, options?: LoadHistoryOptions): Promise<ConversationMessage[]>;
  /**
   * Pin messages (by id; `NewMessage.pinned` pins one as it is appended): no compaction summarizes, clears or archives
   * a pinned message, nor the rest of its unit (a tool call and its results); it stays live in its place and counts in
   * `usage`. Resolves to how many of `messageIds` are live messages of the conversation (the others are ignored).
   */
  pin(conversationId: string, messageIds: string[]): Promise<number>;
  /** Unpin messages: the next compaction may take them. Resolves as `pin` does. */
  unpin(conversationId: string, messageIds: string[]): Promise<number>;
  /** What the model should see: `history` with long tool outputs cut. */
  context(conversationId: string): Promise<ConversationMessage[]>;
  /**
   * The conversation's context against the settings: its tokens as `compact` counts them, their share of the
   * window, the trigger, target and warning mark, and what the next `compact()` would do (`next`). Reads only:
   * `compactor.usage`. Refuses an empty id (`conversationId`).
   */
  usage(conversationId: string): Promise<ContextUsage>;
  /**
   * Calibrate the conversation's token counts by the assistant's reported usage: call it after each assistant model
   * call with the prompt tokens the provider reported (`usage.prompt_tokens`) for the request built from
   * `context(conversationId)`, before appending the reply. promptTokens over memfold's own count of that context,
   * clamped to [1, 5], then multiplies every count memfold takes of the conversation (the trigger and target,
   * `usage`, `context_warning`), in every process sharing the store, until the next compaction. Returns the
   * calibration as stored: `compactor.observeUsage`.
   */
  observeUsage(conversationId: string, usage: UsageObservation): Promise<TokenCalibration>;
  /**
   * Compact the stored history when it passes the trigger (or always with `force`): `compactor.compactStored`. Never throws.
   * With `{ background: true }`, queue the compaction instead and return at once (README, Background compaction):
   * `queued: false` when a job for the conversation was already waiting.
   */
  compact(conversationId: string, options: CompactOptions & { background: true }): Promise<EnqueueResult>;
  compact(conversationId: string, options?: CompactOptions & { background?: false }): Promise<CompactionResult>;
  /**
   * Finish or undo interrupted compactions: of one conversation (waiting for its lock), or of every
   * conversation of the namespace (skipping, as `busy`, those being compacted right now).
   */
  reconcile(conversationId?: string): Promise<ReconcileOutcome[]>;
  /**
   * The namespace's conversations, most recently updated first: `id`, `messageCount` (live messages: no clip-archive,
   * no overlay rows, nothing archived) and `updatedAt` (its last append or commit). From the live store alone: the
   * archive is not read, so a listing costs one query whatever the archive holds.
   */
  listConversations(): Promise<ConversationListing[]>;
  /**
   * Everything kept of the conversation, as JSON Lines records (`erase-export/export-conversation.ts`): a `conversation`
   * header, every `live_message`, every `summary` batch (depth, label, time span, source ids, children), every verbatim
   * `segment` with its `archived_message`s. Reads only; a conversation with nothing stored gives the header alone.
   * Refuses an empty id (`conversationId`).
   */
  exportConversation(conversationId: string): AsyncIterable<ExportRecord>;
  /**
   * Remove the conversation from both stores: archive entries of every kind (physically: LanceDB rewrites the files
   * holding them and drops old versions and index files), live and overlay rows, the clip-archive, the id ledger, the
   * operation journal (with its recorded usage), the loop guard record, the token calibration and the conversation row.
   * Journaled and crash-safe like a compaction: recorded first, finished by the next reconcile if the process dies
   * midway. Waits for the conversation's lock (a running compaction finishes first) for at most `lockTimeoutMs`
   * (default 60,000) or until `signal` aborts: then it throws a `busy` MemfoldError naming the holder and the time
   * waited, having written nothing. Resolves `{ status: 'erased', ... }` or `{ status: 'not_found' }` (nothing was
   * stored; nothing written); throws `InvalidArgumentError` naming `conversationId` for a bad id, and a `MemfoldError`
   * when a store fails part-way (the next reconcile finishes it).
   */
  eraseConversation(conversationId: string, options?: EraseOptions): Promise<EraseResult>;
  /** The memory_read tool bound to one conversation. */
  memoryRead(conversationId: string): MemoryReadTool;
  /**
   * The compact tool bound to one conversation: the agent compacts its own context, with an optional `focus`
   * (`tools/compact-tool.ts`). It answers "No compaction needed" at or under `floorTokens` (default the `targetTokens`
   * setting), refuses while fewer than `minNewTokens` (default the `minFreedTokens` setting) were added since the
   * conversation's last compaction in this process, and otherwise compacts (forced) and says what it did.
   */
  compactTool(conversationId: string, limits?: Partial<CompactToolLimits>): CompactTool;
  /**
   * Change compaction settings while memfold runs, from the next compaction on: every conversation's, or with
   * `{ conversationId }` one conversation's (its window, target, scope...). `partial` merges over what was given
   * before (`undefined` puts a key back to its default; a new window brings its own trigger and budgets unless they
   * are given). Validated as a whole before anything changes: `InvalidConfigError` naming `compaction.<key>`.
   * Returns the settings now in force for that scope. In this process only: `compactor.configure`.
   */
  configure(partial: SettingsChange, scope?: { conversationId: string }): CompactionSettings;
  /**
   * Close the stores this call opened, after the compactions and re-summarizations in flight have finished (for at
   * most `waitMs`, default 30,000; 0 closes at once). One still running then fails (`archive_failed`) and loses
   * nothing: the next open rolls it back.
   */
  close(options?: { waitMs?: number }): Promise<void>;
}

/** A conversation as `listConversations` lists it. */
export interface ConversationListing {
  id: string;
  /** Live messages: no clip-archive, no overlay rows, nothing archived. */
  messageCount: number;
  /** ISO time of its last append or commit. */
  updatedAt: string;
}

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

export async function createMemfold(options: MemfoldOptions = {}): Promise<Memfold> {
  // Everything is checked before anything opens: a bad setting must not leave a store open (PGlite's lock).
  checkOptions(options);
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
  try {
    const inMemory = options.store === 'memory';
    /** A store createMemfold opened itself: closed on failure and by close(). */
    const own = <T extends { close(): Promise<void> }>(store: T): T => {
      opened.push(store);
      return store;
    };
    if (options.persistence) persistence = options.persistence;
    else if (inMemory) persistence = own(createInMemoryPersistence({ namespace: config.namespace, maxMessageBytes: config.maxMessageBytes }));
    else persistence = own(await openPersistence(config, options.migrate ?? true));
    if (sharedRateLimit) reserveRateSlot = persistence.reserveRateSlot?.bind(persistence);
    if (options.archive) archive = options.archive;
    else if (inMemory) archive = own(createInMemoryArchive({ embedder: embedder!, namespace: config.namespace, onWarning: onArchiveWarning }));
    else {
      const check = archiveBindingCheck(config, persistence, { write: options.migrate ?? true, adopt: options.adoptArchive ?? false });
      archive = own(await openCheckedArchive(config, embedder!, onArchiveWarning, check));
    }
    const pipeline = { archive, persistence, tokens, liveSettings, contextWarnings, onEvent: emit, prices };
    compactor = createCompactor({ ...pipeline, summarizer, ...(options.hooks ? { hooks: options.hooks } : {}) });
    offlineCompactor = createCompactor({ ...pipeline, summarizer: createExtractiveSummarizer() });
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
  if (options.reconcileOnOpen ?? true) {
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
      const stored = await persistence.append(conversationId, messages);
      const tokens = await contextWarnings.appended(conversationId, stored, async () => ({
        history: await persistence.loadHistory(conversationId),
        factor: await calibrationFactorOf(persistence, conversationId),
      }));
      await background.appended(conversationId, tokens);
      return stored;
    },
    history,
    pin: (conversationId, messageIds) => persistence.setPinned(conversationId, messageIds, true),
    unpin: (conversationId, messageIds) => persistence.setPinned(conversationId, messageIds, false),
    async context(conversationId) {
      await background.beforeContext(conversationId);
      return modelContext(await persistence.loadHistory(conversationId), compactor.settingsOf(conversationId));
    },
    usage: (conversationId) => compactor.usage(conversationId),
    observeUsage: (conversationId, usage) => compactor.observeUsage(conversationId, usage),
    compact: ((conversationId: string, compactOptions?: CompactOptions & { background?: boolean }) => {
      if (compactOptions?.background === true) return background.enqueue(conversationId);
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
        ...(options.memoryReadTokens !== undefined ? { maxTokens: options.memoryReadTokens } : {}),
        countTokens: (text) => tokens.count(text),
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
    configure: (partial, scope) => compactor.configure(partial, scope),
    compactTool(conversationId, limits = {}) {
      const { targetTokens, minFreedTokens } = compactor.settingsOf(conversationId);
      return createCompactTool(
        {
          usage: (id) => compactor.usage(id),
          compact: (id, compactOptions) => compactor.compactStored(id, compactOptions),
          tokensAfterLastCompaction: (id) => tokensAfterCompaction.get(id),
        },
        conversationId,
        { floorTokens: limits.floorTokens ?? targetTokens, minNewTokens: limits.minNewTokens ?? minFreedTokens },
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
