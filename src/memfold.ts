/**
 * The composition root: reads the configuration, opens the adapters and wires them to the ports.
 * With no options and no environment it runs on the embedded default: PGlite and LanceDB under
 * ./.memfold, the extractive summarizer and the hashing embedder.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ConversationMessage, NewMessage } from './agent/types.js';
import { createCompactor, type Compactor, type CompressOptions } from './compaction/compactor.js';
import { failedResult, type CompactionEvent, type CompactionResult } from './compaction/compaction-result.js';
import { reconcileAll, type ReconcileOutcome } from './compaction/reconcile.js';
import { errorMessage } from './errors.js';
import { assembleContext } from './compaction/context-view.js';
import { resolveRuntimeConfig, type CompactionSettings, type RuntimeConfig } from './config.js';
import type { Embedder } from './embedding/embedder.js';
import { createHashingEmbedder } from './embedding/hashing-embedder.js';
import { createOpenAIEmbedder } from './embedding/openai/openai-embedder.js';
import { openLanceArchive } from './memory/lancedb/lancedb-archive.js';
import type { MemoryManager } from './memory/memory-manager.js';
import { createExtractiveSummarizer } from './model/extractive/extractive-summarizer.js';
import { withFallback } from './model/fallback-model.js';
import { createModelQueue } from './model/model-queue.js';
import type { ModelProvider } from './model/model-provider.js';
import { createOpenAIModel } from './model/openai/openai-model.js';
import { createKyselyPersistence } from './persistence/kysely/kysely-store.js';
import type { PersistenceProvider } from './persistence/persistence-provider.js';
import { createTokenCounter } from './tokens/create-token-counter.js';
import type { TokenCounter } from './tokens/token-counter.js';
import { createMemoryReadTool, type MemoryReadTool } from './tools/memory-read.js';

export interface MemfoldOptions {
  /** Overrides of the values read from the environment (see README, Configuration). */
  config?: Partial<RuntimeConfig>;
  /** The environment to read; default `process.env`. */
  env?: Record<string, string | undefined>;
  compaction?: Partial<CompactionSettings>;
  /** Adapters to use instead of the configured ones (tests, custom backends). */
  model?: ModelProvider;
  embedder?: Embedder;
  tokens?: TokenCounter;
  persistence?: PersistenceProvider;
  memory?: MemoryManager;
  prompt?: string;
  onEvent?: (event: CompactionEvent) => void;
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
}

export interface Memfold {
  readonly config: RuntimeConfig;
  readonly compactor: Compactor;
  readonly persistence: PersistenceProvider;
  readonly memory: MemoryManager;
  readonly model: ModelProvider;
  readonly tokens: TokenCounter;
  /** Append messages to the live table; returns them as stored (ids, seq, times). */
  append(conversationId: string, messages: NewMessage[]): Promise<ConversationMessage[]>;
  /** The live rows: system prompt, clip-archive, then the rest in order. */
  history(conversationId: string): Promise<ConversationMessage[]>;
  /** What the model should see: `history` with long tool outputs cut. */
  context(conversationId: string): Promise<ConversationMessage[]>;
  /** Compact the stored history when it passes the trigger (or always with `force`). Never throws. */
  compact(conversationId: string, options?: CompressOptions): Promise<CompactionResult>;
  /**
   * Finish or undo interrupted compactions: of one conversation (waiting for its lock), or of every
   * conversation of the namespace (skipping, as `busy`, those being compacted right now).
   */
  reconcile(conversationId?: string): Promise<ReconcileOutcome[]>;
  /** The memory_read tool bound to one conversation. */
  memoryRead(conversationId: string): MemoryReadTool;
  close(): Promise<void>;
}

function buildModel(config: RuntimeConfig): ModelProvider {
  const extractive = createExtractiveSummarizer();
  if (!config.summaryModel) return extractive;
  const queue = createModelQueue({ concurrency: config.modelConcurrency });
  const remote = createOpenAIModel({
    model: config.summaryModel,
    timeoutMs: config.modelTimeoutMs,
    deadlineMs: config.modelDeadlineMs,
    maxRetries: config.modelMaxRetries,
    queue,
    ...(config.openaiBaseUrl ? { baseURL: config.openaiBaseUrl } : {}),
    ...(config.openaiApiKey ? { apiKey: config.openaiApiKey } : {}),
  });
  return withFallback(remote, extractive);
}

/** The configured embedder, with its vector size known (the archive table is created with it). */
async function buildEmbedder(config: RuntimeConfig): Promise<Embedder> {
  if (!config.embeddingModel) return createHashingEmbedder();
  const embedder = createOpenAIEmbedder({
    model: config.embeddingModel,
    timeoutMs: config.modelTimeoutMs,
    maxRetries: config.modelMaxRetries,
    queue: createModelQueue({ concurrency: config.modelConcurrency }),
    ...(config.openaiBaseUrl ? { baseURL: config.openaiBaseUrl } : {}),
    ...(config.openaiApiKey ? { apiKey: config.openaiApiKey } : {}),
  });
  // The size comes with the first answer: ask once at startup, which also checks the endpoint early.
  if (embedder.dimensions === 0) await embedder.embed(['memfold']);
  return embedder;
}

async function openPersistence(config: RuntimeConfig, migrate: boolean): Promise<PersistenceProvider> {
  const common = { namespace: config.namespace, maxMessageBytes: config.maxMessageBytes, migrate };
  if (config.databaseUrl) return createKyselyPersistence({ dialect: 'postgres', databaseUrl: config.databaseUrl, ...common });
  const dataDir = path.join(config.home, 'pg');
  await mkdir(dataDir, { recursive: true });
  return createKyselyPersistence({ dialect: 'pglite', dataDir, ...common });
}

export async function createMemfold(options: MemfoldOptions = {}): Promise<Memfold> {
  process.env.LANCEDB_LOG ??= 'error';
  const config = resolveRuntimeConfig(options.config, options.env ?? process.env);
  const model = options.model ?? buildModel(config);
  const tokens = options.tokens ?? createTokenCounter(config.assistantModel ? { model: config.assistantModel } : {});
  const persistence = options.persistence ?? (await openPersistence(config, options.migrate ?? true));
  let memory: MemoryManager;
  try {
    if (options.memory) memory = options.memory;
    else {
      if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(config.lancedbUri)) await mkdir(config.lancedbUri, { recursive: true });
      memory = await openLanceArchive({ uri: config.lancedbUri, embedder: options.embedder ?? (await buildEmbedder(config)), namespace: config.namespace });
    }
  } catch (error) {
    if (!options.persistence) await persistence.close();
    throw error;
  }
  const compactor = createCompactor({
    model, memory, persistence, tokens,
    ...(options.compaction ? { settings: options.compaction } : {}),
    ...(options.prompt ? { prompt: options.prompt } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });

  const reconcile = async (conversationId?: string): Promise<ReconcileOutcome[]> => {
    if (conversationId !== undefined) return compactor.reconcile(conversationId);
    const outcomes = await reconcileAll({ memory, persistence, settings: compactor.settings });
    for (const outcome of outcomes) options.onEvent?.({ type: 'reconciled', ...outcome });
    return outcomes;
  };
  if (options.reconcileOnOpen ?? true) {
    try {
      await reconcile();
    } catch (error) {
      // Nothing is lost by waiting: the messages of an unfinished operation are still live, and the
      // next compaction of that conversation reconciles first. Opening must not fail on it.
      options.onEvent?.({ type: 'reconcile_failed', error: errorMessage(error) });
    }
  }

  const history = async (conversationId: string) => assembleContext(await persistence.loadHistory(conversationId));
  return {
    config, compactor, persistence, memory, model, tokens,
    append: (conversationId, messages) => persistence.append(conversationId, messages),
    history,
    async context(conversationId) {
      return assembleContext(await persistence.loadHistory(conversationId), compactor.settings.toolOutputMaxLines);
    },
    async compact(conversationId, compressOptions) {
      let stored: ConversationMessage[];
      try {
        stored = await history(conversationId);
      } catch (error) {
        return failedResult([], 'unexpected', errorMessage(error));
      }
      return compactor.compress(stored, conversationId, compressOptions);
    },
    reconcile,
    memoryRead: (conversationId) => createMemoryReadTool(memory, conversationId),
    async close() {
      const errors: unknown[] = [];
      if (!options.memory) await memory.close().catch((e: unknown) => errors.push(e));
      if (!options.persistence) await persistence.close().catch((e: unknown) => errors.push(e));
      if (errors.length > 0) throw errors[0];
    },
  };
}
