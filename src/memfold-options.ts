/**
 * What `createMemfold` takes: its options and the events it reports, and the check of the options that are not
 * settings objects (run before anything opens).
 */
import type { BackgroundEvent } from './background/background-events.js';
import type { Archive } from './archive/archive.js';
import type { CompactionHooks } from './compaction/compaction-hooks.js';
import type { CompactionEvent } from './compaction/compaction-result.js';
import type { CompactionSettings } from './compaction/compaction-settings.js';
import type { RuntimeConfig } from './config.js';
import type { PriceOverrides } from './cost/resolve-prices.js';
import type { Embedder } from './embedding/embedder.js';
import { InvalidConfigError } from './errors.js';
import { isSummaryPromptMode, SUMMARY_PROMPT_MODE_RULE, type SummaryPromptMode } from './openai/openai-prompt-mode.js';
import type { PersistenceProvider } from './persistence/persistence-provider.js';
import type { Summarizer } from './summarizer/summarizer.js';
import type { TokenCounter } from './tokens/token-counter.js';
import { MEMORY_READ_MAX_TOKENS, MEMORY_READ_MIN_TOKENS } from './tools/memory-read-args.js';

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
export type MemfoldEvent = CompactionEvent | MemfoldWarningEvent | BackgroundEvent;

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
   * Record the configured archive (`LANCEDB_URI`) as the live store's, replacing the one recorded: for an operator who
   * moved the archive (the CLI: `memfold reconcile --adopt-archive`). Default false: a store that belongs to another
   * archive is refused (`archive_mismatch`), since two archives for one store split its memory (README, Configuration).
   */
  adoptArchive?: boolean;
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

/** Options that are not settings objects, checked before anything opens. */
export function checkOptions(options: MemfoldOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidConfigError('options', 'must be an object');
  for (const key of ['reconcileOnOpen', 'migrate', 'adoptArchive'] as const) {
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
  if (options.adoptArchive === true && options.migrate === false)
    throw new InvalidConfigError('adoptArchive', 'writes the live store: not with migrate: false');
}
