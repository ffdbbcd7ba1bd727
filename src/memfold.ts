/**
 * The composition root: reads the configuration, opens the adapters and wires them to the ports.
 * With no options and no environment it runs on the embedded default: PGlite and LanceDB under
 * ./.memfold, the extractive summarizer and the hashing embedder.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ConversationMessage, NewMessage } from './conversation/types.js';
import { createCompactor, type Compactor, type CompactOptions, type ContextUsage, type UsageObservation } from './compaction/compactor.js';
import { calibrationFactorOf } from './compaction/compaction-deps.js';
import type { CompactionHooks } from './compaction/compaction-hooks.js';
import { createContextWarnings } from './compaction/context-warnings.js';
import type { CompactionEvent, CompactionResult } from './compaction/compaction-result.js';
import { reconcileAll, type ReconcileOutcome } from './compaction/reconcile.js';
import { errorMessage, failureReason, InvalidConfigError, MemfoldError } from './errors.js';
import { assembleContext, modelContext } from './compaction/context-view.js';
import type { CompactionSettings } from './compaction/compaction-settings.js';
import { createLiveSettings, type SettingsChange } from './compaction/live-settings.js';
import { resolveRuntimeConfig, type RuntimeConfig } from './config.js';
import type { Embedder } from './embedding/embedder.js';
import { createHashingEmbedder } from './embedding/hashing-embedder.js';
import { createInMemoryArchive } from './archive/in-memory/in-memory-archive.js';
import type { Archive } from './archive/archive.js';
import { createExtractiveSummarizer } from './summarizer/extractive/extractive-summarizer.js';
import { withFallback } from './summarizer/with-fallback.js';
import type { Summarizer } from './summarizer/summarizer.js';
import { createCircuitBreaker } from './openai/openai-circuit-breaker.js';
import { createOpenAIEmbedder } from './openai/openai-embedder.js';
import { createModelQueue, rateLimitedQueueOptions, type ModelQueue } from './openai/openai-queue.js';
import { createOpenAISummarizer } from './openai/openai-summarizer.js';
import { chooseSummaryModel, type SummaryModelChoice } from './openai/summary-model.js';
import { isSummaryPromptMode, SUMMARY_PROMPT_MODE_RULE, type SummaryPromptMode } from './openai/openai-prompt-mode.js';
import { createInMemoryPersistence } from './persistence/in-memory/in-memory-persistence.js';
import { createKyselyPersistence, openLanceArchive } from './on-demand-adapters.js';
import type { LoadHistoryOptions, PersistenceProvider, TokenCalibration } from './persistence/persistence-provider.js';
import { createTokenCounter } from './tokens/create-token-counter.js';
import type { PriceTable } from './cost/model-price.js';
import { resolvePrices, type PriceOverrides } from './cost/resolve-prices.js';
import type { TokenCounter } from './tokens/token-counter.js';
import { MEMORY_READ_MAX_TOKENS, MEMORY_READ_MIN_TOKENS } from './tools/memory-read-args.js';
import { createMemoryReadTool, type MemoryReadTool } from './tools/memory-read.js';
import { createCompactTool, type CompactTool, type CompactToolLimits } from './tools/compact-tool.js';

/**
 * Something degraded while nothing failed. `vector_search_unavailable`: the embedder failed during a search,
 * which answered from full text alone (`message` says why); `archive_warning`: anything else the archive
 * reports, e.g. index maintenance that failed after a successful write.
 */
export interface MemfoldWarningEvent {
  type: 'warning';
  code: 'vector_search_unavailable' | 'archive_warning';
  message: string;
}

/** What `onEvent` receives: the compaction's events, reconcile reports, and warnings. */
export type MemfoldEvent = CompactionEvent | MemfoldWarningEvent;

export interface MemfoldOptions {
  /** Overrides of the values read from the environment (see README, Configuration). */
  config?: Partial<RuntimeConfig>;
  /** The environment to read; default `process.env`. */
  env?: Record<string, string | undefined>;
  compaction?: Partial<CompactionSettings>;
  /** Adapters to use instead of the configured ones (tests, custom backends). */
  summarizer?: Summarizer;
  embedder?: Embedder;
  tokens?: TokenCounter;
  persistence?: PersistenceProvider;
  archive?: Archive;
  /**
   * System prompt template of the OpenAI-compatible summarizer (`MEMFOLD_SUMMARY_MODEL`); `{{maxTokens}}` is filled
   * in. Default: the built-in prompt of `promptMode`. Not read by the extractive summarizer; refused with a `model` adapter,
   * which renders its own prompt.
   */
  prompt?: string;
  /**
   * Which built-in prompt the OpenAI-compatible summarizer uses: `'structured'` (default; seven sections per chunk,
   * each batch speaks for its own stretch) or `'update'` (each chunk merged into the summary so far, rewritten as
   * one). Default `MEMFOLD_SUMMARY_PROMPT`, else `'structured'`. A custom `prompt` wins; refused with a `summarizer`.
   */
  promptMode?: SummaryPromptMode;
  onEvent?: (event: MemfoldEvent) => void;
  /**
   * `beforeCompact(info)` may cancel a compaction about to run or supply its summary; `afterCompact(result)` hears every
   * compaction that ran (`compaction/compaction-hooks.ts`; README, Hooks and events). Default none.
   */
  hooks?: CompactionHooks;
  /**
   * Finish or undo the compactions a crash interrupted, for every conversation of the namespace, while
   * opening. Default true. A conversation another process is compacting is left to it.
   */
  reconcileOnOpen?: boolean;
  /**
   * Run the live store's migrations on open. Default true. With false the store only checks that the
   * schema is current and refuses to open otherwise (read commands must not create tables).
   */
  migrate?: boolean;
  /**
   * Where the live table and the archive live. `'configured'` (default): PostgreSQL at `DATABASE_URL` or
   * PGlite under `MEMFOLD_HOME`, and LanceDB at `LANCEDB_URI`. `'memory'`: plain maps in this process
   * (`createInMemoryPersistence`, `createInMemoryArchive`), for compaction with no files at all; nothing
   * survives `close()`. Adapters passed as `persistence` or `memory` are used either way.
   */
  store?: 'configured' | 'memory';
  /**
   * Tokens one memory_read search answer may take when the call gives no `max_tokens` (counted with
   * memfold's token counter: exact when MEMFOLD_MODEL names a known model). Default 3,000; 200 to 12,000.
   */
  memoryReadTokens?: number;
  /**
   * Prices by model name, in US dollars per million tokens (`{ input?, output?, cachedInput? }`), merged over
   * `DEFAULT_PRICES` (list prices as of `PRICES_AS_OF`: check them) for each result's `costUsd` (`cost/README.md`).
   * A model the table lacks needs `input` and `output`. Errors name `prices.<model>.<field>`.
   */
  prices?: PriceOverrides;
}

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
  /** Compact the stored history when it passes the trigger (or always with `force`): `compactor.compactStored`. Never throws. */
  compact(conversationId: string, options?: CompactOptions): Promise<CompactionResult>;
  /**
   * Finish or undo interrupted compactions: of one conversation (waiting for its lock), or of every
   * conversation of the namespace (skipping, as `busy`, those being compacted right now).
   */
  reconcile(conversationId?: string): Promise<ReconcileOutcome[]>;
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
  close(): Promise<void>;
}

function breakerOf(config: RuntimeConfig) {
  return createCircuitBreaker({ failures: config.modelBreakerFailures, cooldownMs: config.modelBreakerCooldownMs });
}

/**
 * The one queue of a memfold's remote calls: summaries and embeddings share `MEMFOLD_MODEL_CONCURRENCY`
 * and `MEMFOLD_MODEL_RPM`, since they usually go to the same endpoint and its limits count both.
 */
function remoteCallQueue(config: RuntimeConfig): ModelQueue {
  return createModelQueue(rateLimitedQueueOptions(config.modelConcurrency, config.modelRequestsPerMinute));
}

function buildSummarizer(
  config: RuntimeConfig,
  choice: SummaryModelChoice,
  queue: ModelQueue,
  prompt: string | undefined,
  promptMode: SummaryPromptMode | undefined,
): Summarizer {
  const extractive = createExtractiveSummarizer();
  if (!choice.model) return extractive;
  const remote = createOpenAISummarizer({
    model: choice.model,
    ...(config.summaryContextWindow ? { contextWindow: config.summaryContextWindow } : {}),
    timeoutMs: config.modelTimeoutMs,
    deadlineMs: config.modelDeadlineMs,
    maxRetries: config.modelMaxRetries,
    queue,
    breaker: breakerOf(config),
    ...(prompt ? { prompt } : {}),
    ...(promptMode ? { promptMode } : {}),
    ...(config.openaiBaseUrl ? { baseURL: config.openaiBaseUrl } : {}),
    ...(config.openaiApiKey ? { apiKey: config.openaiApiKey } : {}),
  });
  return withFallback(remote, extractive);
}

/**
 * The configured embedder. A remote one is not called here: its vector size is learned from its first
 * answer, and the archive takes it from the table meanwhile (or creates the table on the first write), so
 * an unreachable endpoint stops archive writes, never opening, appends or reads.
 */
function buildEmbedder(config: RuntimeConfig, queue: ModelQueue): Embedder {
  if (!config.embeddingModel) return createHashingEmbedder();
  return createOpenAIEmbedder({
    model: config.embeddingModel,
    timeoutMs: config.modelTimeoutMs,
    deadlineMs: config.modelDeadlineMs,
    maxRetries: config.modelMaxRetries,
    queue,
    breaker: breakerOf(config),
    ...(config.openaiBaseUrl ? { baseURL: config.openaiBaseUrl } : {}),
    ...(config.openaiApiKey ? { apiKey: config.openaiApiKey } : {}),
  });
}

async function openPersistence(config: RuntimeConfig, migrate: boolean): Promise<PersistenceProvider> {
  const common = { namespace: config.namespace, maxMessageBytes: config.maxMessageBytes, migrate };
  if (config.databaseUrl) return createKyselyPersistence({ dialect: 'postgres', databaseUrl: config.databaseUrl, ...common });
  const dataDir = path.join(config.home, 'pg');
  await mkdir(dataDir, { recursive: true });
  return createKyselyPersistence({ dialect: 'pglite', dataDir, ...common });
}

async function openArchive(config: RuntimeConfig, embedder: Embedder, onWarning: (message: string, error: unknown) => void): Promise<Archive> {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(config.lancedbUri)) await mkdir(config.lancedbUri, { recursive: true });
  return openLanceArchive({ uri: config.lancedbUri, embedder, namespace: config.namespace, onWarning });
}

/** Options that are not settings objects, checked before anything opens. */
function checkOptions(options: MemfoldOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidConfigError('options', 'must be an object');
  for (const key of ['reconcileOnOpen', 'migrate'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'boolean') throw new InvalidConfigError(key, 'must be a boolean');
  }
  if (options.prompt !== undefined && (typeof options.prompt !== 'string' || options.prompt.trim() === '')) {
    throw new InvalidConfigError('prompt', 'must be a non-empty string');
  }
  if (options.prompt !== undefined && options.summarizer !== undefined) {
    throw new InvalidConfigError('prompt', 'applies to the summarizer memfold builds (MEMFOLD_SUMMARY_MODEL); a `model` adapter renders its own prompt');
  }
  if (options.promptMode !== undefined && !isSummaryPromptMode(options.promptMode)) {
    throw new InvalidConfigError('promptMode', `${SUMMARY_PROMPT_MODE_RULE} (got ${JSON.stringify(options.promptMode)})`);
  }
  if (options.promptMode !== undefined && options.summarizer !== undefined) {
    throw new InvalidConfigError(
      'promptMode',
      'applies to the summarizer memfold builds (MEMFOLD_SUMMARY_MODEL); a `summarizer` adapter renders its own prompt',
    );
  }
  if (options.onEvent !== undefined && typeof options.onEvent !== 'function') throw new InvalidConfigError('onEvent', 'must be a function');
  if (options.hooks !== undefined) {
    if (typeof options.hooks !== 'object' || options.hooks === null) throw new InvalidConfigError('hooks', 'must be an object');
    for (const key of Object.keys(options.hooks)) {
      if (key !== 'beforeCompact' && key !== 'afterCompact') throw new InvalidConfigError(`hooks.${key}`, 'unknown hook (beforeCompact, afterCompact)');
      const hook = options.hooks[key];
      if (hook !== undefined && typeof hook !== 'function') throw new InvalidConfigError(`hooks.${key}`, 'must be a function');
    }
  }
  const readTokens = options.memoryReadTokens;
  if (readTokens !== undefined && !(Number.isInteger(readTokens) && readTokens >= MEMORY_READ_MIN_TOKENS && readTokens <= MEMORY_READ_MAX_TOKENS)) {
    throw new InvalidConfigError(
      'memoryReadTokens',
      `must be an integer from ${MEMORY_READ_MIN_TOKENS} to ${MEMORY_READ_MAX_TOKENS} (got ${String(readTokens)})`,
    );
  }
  if (options.store !== undefined && options.store !== 'configured' && options.store !== 'memory') {
    throw new InvalidConfigError('store', "must be 'configured' or 'memory'");
  }
}

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

export async function createMemfold(options: MemfoldOptions = {}): Promise<Memfold> {
  // Everything is checked before anything opens: a bad setting must not leave a store open (PGlite's lock).
  checkOptions(options);
  const config = resolveRuntimeConfig(options.config, options.env ?? process.env);
  const prices = resolvePrices(options.prices);
  // Resolved (and so validated) before anything opens; `configure` changes them later.
  const liveSettings = createLiveSettings(options.compaction);
  const queue = remoteCallQueue(config);
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
    if (options.archive) archive = options.archive;
    else if (inMemory) archive = own(createInMemoryArchive({ embedder: embedder!, namespace: config.namespace, onWarning: onArchiveWarning }));
    else archive = own(await openArchive(config, embedder!, onArchiveWarning));
    compactor = createCompactor({
      summarizer,
      archive,
      persistence,
      tokens,
      liveSettings,
      contextWarnings,
      onEvent: emit,
      prices,
      ...(options.hooks ? { hooks: options.hooks } : {}),
    });
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
      await contextWarnings.appended(conversationId, stored, async () => ({
        history: await persistence.loadHistory(conversationId),
        factor: await calibrationFactorOf(persistence, conversationId),
      }));
      return stored;
    },
    history,
    async context(conversationId) {
      return modelContext(await persistence.loadHistory(conversationId), compactor.settingsOf(conversationId));
    },
    usage: (conversationId) => compactor.usage(conversationId),
    observeUsage: (conversationId, usage) => compactor.observeUsage(conversationId, usage),
    compact: (conversationId, compressOptions) => compactor.compactStored(conversationId, compressOptions),
    reconcile,
    memoryRead(conversationId) {
      const tool = createMemoryReadTool(archive, conversationId, {
        ...(options.memoryReadTokens !== undefined ? { maxTokens: options.memoryReadTokens } : {}),
        countTokens: (text) => tokens.count(text),
      });
      return {
        definition: tool.definition,
        // The archive reports a failed embedder through onWarning, from inside the search this call runs:
        // the async context ties the report to this call, so concurrent calls never see each other's notes.
        async execute(args) {
          const reasons = new Set<string>();
          const result = await vectorNotes.run(reasons, () => tool.execute(args));
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
    close: () => closeAll(opened),
  };
}
