/**
 * Opening what `createMemfold` (`memfold.ts`) holds: the live store and the archive (unless passed in), the stored
 * settings and the two compactors. What it opened is closed again if opening fails part-way, and by `close()`.
 */
import type { Archive } from './archive/archive.js';
import { createInMemoryArchive } from './archive/in-memory/in-memory-archive.js';
import { createCompactor, type Compactor } from './compaction/compactor.js';
import { summarizerInputBudget } from './compaction/fold/summarizer-budget.js';
import type { LiveSettings } from './compaction/live-settings.js';
import { createStoredSettings, type StoredSettings } from './compaction/stored-settings.js';
import { withStoredSettings } from './compaction/stored-settings-compactor.js';
import type { ContextWarnings } from './compaction/usage/context-warnings.js';
import type { RuntimeConfig } from './config.js';
import { openBoundArchive, openPersistence } from './configured-adapters.js';
import type { PriceTable } from './cost/model-price.js';
import type { Embedder } from './embedding/embedder.js';
import type { MemfoldEvent, ResolvedMemfoldOptions } from './memfold-options.js';
import { createInMemoryPersistence } from './persistence/in-memory/in-memory-persistence.js';
import type { PersistenceProvider } from './persistence/persistence-provider.js';
import { createExtractiveSummarizer } from './summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from './summarizer/summarizer.js';
import type { TokenCounter } from './tokens/token-counter.js';

export interface Closeable {
  close(): Promise<void>;
}

/** Close what was opened, newest first, keeping the first error. */
export async function closeAll(opened: ReadonlyArray<Closeable>): Promise<void> {
  const errors: unknown[] = [];
  for (const store of [...opened].reverse()) await store.close().catch((e: unknown) => errors.push(e));
  if (errors.length > 0) throw errors[0];
}

export interface OpenMemfoldDeps {
  options: ResolvedMemfoldOptions;
  config: RuntimeConfig;
  embedder: Embedder | undefined;
  summarizer: Summarizer;
  tokens: TokenCounter;
  prices: PriceTable;
  liveSettings: LiveSettings;
  contextWarnings: ContextWarnings;
  emit: (event: MemfoldEvent) => void;
  onArchiveWarning: (message: string, error: unknown) => void;
  /** Called with the live store as soon as it is open (the shared rate limit reserves its slots there). */
  bindStore: (persistence: PersistenceProvider) => void;
}

export interface OpenedMemfold {
  persistence: PersistenceProvider;
  archive: Archive;
  compactor: Compactor;
  /** The same pipeline with the offline summarizer: the hard-window fallback of background mode, in the caller's turn. */
  offlineCompactor: Compactor;
  /** Each conversation's overrides in the live store, read before every compaction plans. */
  stored: StoredSettings;
  /** What this call opened (never the adapters passed in), newest last. */
  opened: ReadonlyArray<Closeable>;
}

export async function openMemfold(deps: OpenMemfoldDeps): Promise<OpenedMemfold> {
  const { options, config, embedder, summarizer, tokens, onArchiveWarning } = deps;
  /** What this call opened (never the adapters passed in), closed again if opening fails part-way. */
  const opened: Closeable[] = [];
  try {
    const inMemory = options.store === 'memory';
    /** A store createMemfold opened itself: closed on failure and by close(). */
    const own = <T extends Closeable>(store: T): T => {
      opened.push(store);
      return store;
    };
    let persistence: PersistenceProvider;
    if (options.persistence) persistence = options.persistence;
    else if (inMemory) persistence = own(createInMemoryPersistence({ namespace: config.namespace, maxMessageBytes: config.maxMessageBytes }));
    else persistence = own(await openPersistence(config, options.migrate));
    deps.bindStore(persistence);
    let archive: Archive;
    if (options.archive) archive = options.archive;
    else if (inMemory) archive = own(createInMemoryArchive({ embedder: embedder!, namespace: config.namespace, onWarning: onArchiveWarning }));
    else archive = own(await openBoundArchive(config, embedder!, onArchiveWarning, persistence, { write: options.migrate, adopt: options.adoptArchive }));
    const { liveSettings, contextWarnings, emit, prices } = deps;
    const pipeline = { archive, persistence, tokens, liveSettings, contextWarnings, onEvent: emit, prices };
    // Stored overrides that leave the summarizer no room are refused, as `configure` refuses them.
    const stored = createStoredSettings({
      live: liveSettings,
      store: persistence,
      check: (settings) => void summarizerInputBudget(summarizer, tokens, settings),
    });
    const compactor = withStoredSettings(createCompactor({ ...pipeline, summarizer, ...(options.hooks ? { hooks: options.hooks } : {}) }), stored);
    const offlineCompactor = withStoredSettings(createCompactor({ ...pipeline, summarizer: createExtractiveSummarizer() }), stored);
    return { persistence, archive, compactor, offlineCompactor, stored, opened };
  } catch (error) {
    await closeAll(opened).catch(() => undefined); // the opening error is the one to report
    throw error;
  }
}
