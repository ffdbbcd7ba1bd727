/**
 * What `createMemfold` takes: one zod schema of its options gives their type (`MemfoldOptions`) and their check (run
 * before anything opens), and the events it reports. The settings objects in it are checked by their own schemas:
 * `compaction` here by the compaction settings' schema, `config` and `prices` where they resolve.
 */
import type { z } from 'zod';
import type { BackgroundEvent } from './background/background-events.js';
import type { Archive } from './archive/archive.js';
import type { CompactionHooks } from './compaction/compaction-hooks.js';
import type { CompactionEvent } from './compaction/compaction-result.js';
import { compactionSettingsInputSchema } from './compaction/compaction-settings.js';
import type { RuntimeConfig } from './config.js';
import type { PriceOverrides } from './cost/resolve-prices.js';
import type { Embedder } from './embedding/embedder.js';
import { parseWithSchema } from './conversation/schema-issues.js';
import { InvalidConfigError } from './errors.js';
import { SUMMARY_PROMPT_MODE_RULE, SUMMARY_PROMPT_MODES } from './openai/openai-prompt-mode.js';
import type { PersistenceProvider } from './persistence/persistence-provider.js';
import type { Summarizer } from './summarizer/summarizer.js';
import type { TokenCounter } from './tokens/token-counter.js';
import { MEMORY_READ_DEFAULT_TOKENS, MEMORY_READ_MAX_TOKENS, MEMORY_READ_MIN_TOKENS } from './tools/memory-read-args.js';
import { onDemand, valueOnDemand, zod } from './zod-on-demand.js';

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

/** An adapter passed in: any object; its own methods are its contract. */
const adapter = <T>() => zod().custom<T>((value) => typeof value === 'object' && value !== null, { error: 'must be an object' });
const callback = <T>() => zod().custom<T>((value) => typeof value === 'function', { error: 'must be a function' });
const flag = () => zod().boolean({ error: 'must be a boolean' });
/** A settings object resolved, with errors naming its fields, by its own module (`config.ts`, `cost/`). */
const resolvedElsewhere = <T>() => zod().custom<T>();

const readTokensRule = `must be an integer from ${MEMORY_READ_MIN_TOKENS} to ${MEMORY_READ_MAX_TOKENS}`;

const HOOKS = ['beforeCompact', 'afterCompact'];

/** `{ beforeCompact?, afterCompact? }`, each a function: typed as `CompactionHooks`, each refusal naming `hooks.<key>`. */
const hooksSchema = () =>
  zod()
    .custom<CompactionHooks>((value) => typeof value === 'object' && value !== null, { error: 'must be an object' })
    .check((ctx) => {
      for (const [key, hook] of Object.entries(ctx.value)) {
        const message = !HOOKS.includes(key)
          ? 'unknown hook (beforeCompact, afterCompact)'
          : hook !== undefined && typeof hook !== 'function'
            ? 'must be a function'
            : undefined;
        if (message !== undefined) ctx.issues.push({ code: 'custom', path: [key], message, input: hook });
      }
    });

/** Each option's type and rule (the defaults are said with each, and live where the option is read). */
const memfoldOptionsShape = onDemand(() => ({
  /** Overrides of the values read from the environment (see README, Configuration). */
  config: resolvedElsewhere<Partial<RuntimeConfig>>().optional(),
  /** The environment to read; default `process.env`. */
  env: resolvedElsewhere<Record<string, string | undefined>>().optional(),
  /** Compaction settings over `DEFAULT_COMPACTION_SETTINGS` (`compaction/compaction-settings-schema.ts` checks them). */
  compaction: compactionSettingsInputSchema.optional(),
  /** Adapters to use instead of the configured ones (tests, custom backends). */
  summarizer: adapter<Summarizer>().optional(),
  embedder: adapter<Embedder>().optional(),
  tokens: adapter<TokenCounter>().optional(),
  persistence: adapter<PersistenceProvider>().optional(),
  archive: adapter<Archive>().optional(),
  /**
   * System prompt template of the OpenAI-compatible summarizer (`MEMFOLD_SUMMARY_MODEL`); `{{maxTokens}}` is filled
   * in. Default: the built-in prompt of `promptMode`. Not read by the extractive summarizer; refused with a `model` adapter,
   * which renders its own prompt.
   */
  prompt: zod()
    .string({ error: 'must be a non-empty string' })
    .refine((text) => text.trim() !== '', 'must be a non-empty string')
    .optional(),
  /**
   * Which built-in prompt the OpenAI-compatible summarizer uses: `'structured'` (default; seven sections per chunk,
   * each batch speaks for its own stretch) or `'update'` (each chunk merged into the summary so far, rewritten as
   * one). Default `MEMFOLD_SUMMARY_PROMPT`, else `'structured'`. A custom `prompt` wins; refused with a `summarizer`.
   */
  promptMode: zod()
    .enum(SUMMARY_PROMPT_MODES, { error: (issue) => `${SUMMARY_PROMPT_MODE_RULE} (got ${JSON.stringify(issue.input)})` })
    .optional(),
  onEvent: callback<(event: MemfoldEvent) => void>().optional(),
  /**
   * `beforeCompact(info)` may cancel a compaction about to run or supply its summary; `afterCompact(result)` hears every
   * compaction that ran (`compaction/compaction-hooks.ts`; README, Hooks and events). Default none.
   */
  hooks: hooksSchema().optional(),
  /**
   * Finish or undo the compactions a crash interrupted, for every conversation of the namespace, while
   * opening. Default true. A conversation another process is compacting is left to it.
   */
  reconcileOnOpen: flag().optional(),
  /**
   * Run the live store's migrations on open. Default true. With false the store only checks that the
   * schema is current and refuses to open otherwise (read commands must not create tables).
   */
  migrate: flag().optional(),
  /**
   * Record the configured archive (`LANCEDB_URI`) as the live store's, replacing the one recorded: for an operator who
   * moved the archive (the CLI: `memfold reconcile --adopt-archive`). Default false: a store that belongs to another
   * archive is refused (`archive_mismatch`), since two archives for one store split its memory (README, Configuration).
   */
  adoptArchive: flag().optional(),
  /**
   * Where the live table and the archive live. `'configured'` (default): PostgreSQL at `DATABASE_URL` or
   * PGlite under `MEMFOLD_HOME`, and LanceDB at `LANCEDB_URI`. `'memory'`: plain maps in this process
   * (`createInMemoryPersistence`, `createInMemoryArchive`), for compaction with no files at all; nothing
   * survives `close()`. Adapters passed as `persistence` or `memory` are used either way.
   */
  store: zod().enum(['configured', 'memory'], { error: "must be 'configured' or 'memory'" }).optional(),
  /**
   * Tokens one memory_read search answer may take when the call gives no `max_tokens` (counted with
   * memfold's token counter: exact when MEMFOLD_MODEL names a known model). Default 3,000; 200 to 12,000.
   */
  memoryReadTokens: zod()
    .number({ error: (issue) => `${readTokensRule} (got ${String(issue.input)})` })
    .int({ error: (issue) => `${readTokensRule} (got ${String(issue.input)})` })
    .min(MEMORY_READ_MIN_TOKENS, { error: (issue) => `${readTokensRule} (got ${String(issue.input)})` })
    .max(MEMORY_READ_MAX_TOKENS, { error: (issue) => `${readTokensRule} (got ${String(issue.input)})` })
    .optional(),
  /**
   * Prices by model name, in US dollars per million tokens (`{ input?, output?, cachedInput? }`), merged over
   * `DEFAULT_PRICES` (list prices as of `PRICES_AS_OF`: check them) for each result's `costUsd` (`cost/README.md`).
   * A model the table lacks needs `input` and `output`. Errors name `prices.<model>.<field>`.
   */
  prices: resolvedElsewhere<PriceOverrides>().optional(),
}));
type OptionsShape = ReturnType<typeof memfoldOptionsShape>;

/** The rules between options, each naming the option to change. */
function crossOptionRules(options: z.output<z.ZodObject<OptionsShape>>, ctx: z.RefinementCtx): void {
  const refuse = (key: keyof OptionsShape, message: string) => ctx.addIssue({ code: 'custom', path: [key], message });
  if (options.prompt !== undefined && options.summarizer !== undefined) {
    refuse('prompt', 'applies to the summarizer memfold builds (MEMFOLD_SUMMARY_MODEL); a `model` adapter renders its own prompt');
  }
  if (options.promptMode !== undefined && options.summarizer !== undefined) {
    refuse('promptMode', 'applies to the summarizer memfold builds (MEMFOLD_SUMMARY_MODEL); a `summarizer` adapter renders its own prompt');
  }
  if (options.adoptArchive === true && options.migrate === false) refuse('adoptArchive', 'writes the live store: not with migrate: false');
}

/** `createMemfold`'s options: each by its rule, and the rules between them. Unknown keys are ignored. */
export const memfoldOptionsSchema = valueOnDemand(() => zod().object(memfoldOptionsShape(), { error: 'must be an object' }).superRefine(crossOptionRules));

/** What `createMemfold` takes: the schema's input type, so the type and the check cannot drift. */
export type MemfoldOptions = z.input<typeof memfoldOptionsSchema>;

/** The defaults of the options that have one: the one place they are written (`createMemfold` reads them here). */
export const DEFAULT_MEMFOLD_OPTIONS = Object.freeze({
  reconcileOnOpen: true,
  migrate: true,
  adoptArchive: false,
  store: 'configured',
  memoryReadTokens: MEMORY_READ_DEFAULT_TOKENS,
} as const satisfies MemfoldOptions);

type Defaulted = keyof typeof DEFAULT_MEMFOLD_OPTIONS;
/** Options checked, with the defaults of `DEFAULT_MEMFOLD_OPTIONS` in place of those not given. */
export type ResolvedMemfoldOptions = Omit<MemfoldOptions, Defaulted> & { [K in Defaulted]: NonNullable<MemfoldOptions[K]> };

/** The options checked before anything opens; errors are InvalidConfigError naming the option (`hooks.onCompact`). */
export function checkOptions(options: MemfoldOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidConfigError('options', 'must be an object');
  parseWithSchema(memfoldOptionsSchema, options, { toError: (field, rule) => new InvalidConfigError(field, rule) });
}

/** `checkOptions`, then the defaults filled in. Adapters and callbacks are the caller's own objects, not copies. */
export function resolveMemfoldOptions(options: MemfoldOptions): ResolvedMemfoldOptions {
  checkOptions(options);
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_MEMFOLD_OPTIONS, ...given } as ResolvedMemfoldOptions;
}
