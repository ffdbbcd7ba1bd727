/**
 * Every setting, its default and its validation, in one place. No other file supplies a default.
 */
import { InvalidConfigError } from './errors.js';
import {
  DEFAULT_MODEL_BREAKER_COOLDOWN_MS,
  DEFAULT_MODEL_BREAKER_FAILURES,
  DEFAULT_MODEL_CONCURRENCY,
  DEFAULT_MODEL_MAX_RETRIES,
  DEFAULT_MODEL_TIMEOUT_MS,
  defaultModelDeadlineMs,
} from './openai/openai-defaults.js';

export interface CompactionSettings {
  /** Tokens the assistant's model accepts. */
  contextWindow: number;
  /** Compaction runs when the history's tokens reach this. Default: window - min(20% of window, 20,000). */
  trigger: number;
  /** Share of the window at which a context warning is reported. */
  warnAt: number;
  /** Verbatim tail kept by tokens; the cut lands on a turn boundary. */
  keepRecentTokens: number;
  /** Verbatim tail kept by count (whichever keeps more of keepRecentTokens/keepRecentMessages wins, within budget). */
  keepRecentMessages: number;
  /** Opening turns kept verbatim. */
  keepFirstTurns: number;
  /** Tokens per chunk sent to the summarizer. */
  chunkTokens: number;
  /** Tokens per summary batch. */
  maxSummaryTokens: number;
  /** Batches shown at the head of the clip-archive. */
  clipFirst: number;
  /** Batches shown at the tail of the clip-archive. */
  clipLast: number;
  /** Extra frontier batches tolerated before re-summarization into a higher depth. */
  clipBuffer: number;
  /** Tool outputs in the verbatim tail are cut to this many lines (the full text is archived). */
  toolOutputMaxLines: number;
  /** A summarizer request never exceeds this share of the summarizer's window. */
  summarizerInputShare: number;
  /** Tokens per verbatim transcript segment in the archive (the retrieval unit of memory_read). */
  transcriptSegmentTokens: number;
}

export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** The trigger for a window: the window less a reserve of 20% of it, at most 20,000 tokens. */
export function defaultTrigger(contextWindow: number): number {
  return contextWindow - Math.min(Math.floor(contextWindow * 0.2), 20_000);
}

export const DEFAULT_COMPACTION_SETTINGS: Readonly<CompactionSettings> = Object.freeze({
  contextWindow: DEFAULT_CONTEXT_WINDOW,
  trigger: defaultTrigger(DEFAULT_CONTEXT_WINDOW),
  warnAt: 0.7,
  keepRecentTokens: 16_384,
  keepRecentMessages: 6,
  keepFirstTurns: 1,
  chunkTokens: 8_000,
  maxSummaryTokens: 1_024,
  clipFirst: 2,
  clipLast: 2,
  clipBuffer: 2,
  toolOutputMaxLines: 50,
  summarizerInputShare: 0.8,
  transcriptSegmentTokens: 800,
});

/**
 * Merge user settings over the defaults and validate. When only `contextWindow` is given, the trigger
 * and the token budgets that exceed it follow the window (so a 4,000-token window works out of the box).
 */
export function resolveCompactionSettings(input: Partial<CompactionSettings> = {}): CompactionSettings {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidConfigError('compaction', 'must be an object of settings');
  for (const [key, value] of Object.entries(input)) {
    if (!(key in DEFAULT_COMPACTION_SETTINGS)) throw new InvalidConfigError(`compaction.${key}`, 'unknown setting');
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
      throw new InvalidConfigError(`compaction.${key}`, 'must be a finite number');
    }
  }
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<CompactionSettings>;
  const contextWindow = defined.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const scaled: Partial<CompactionSettings> = {
    trigger: defaultTrigger(contextWindow),
    // The verbatim tail and the chunks scale down with a small window so that compaction can make room.
    keepRecentTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.keepRecentTokens, Math.floor(contextWindow * 0.25)),
    chunkTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.chunkTokens, Math.floor(contextWindow * 0.5)),
    maxSummaryTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.maxSummaryTokens, Math.floor(contextWindow * 0.08)),
    transcriptSegmentTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.transcriptSegmentTokens, Math.floor(contextWindow * 0.2)),
  };
  const settings: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...scaled, ...defined, contextWindow };
  validateCompactionSettings(settings);
  return settings;
}

function requireInt(settings: CompactionSettings, key: keyof CompactionSettings, min: number): void {
  const value = settings[key];
  if (!Number.isInteger(value) || value < min) {
    throw new InvalidConfigError(`compaction.${key}`, `must be an integer >= ${min} (got ${value})`);
  }
}

function requireShare(settings: CompactionSettings, key: keyof CompactionSettings): void {
  const value = settings[key];
  if (!(value > 0 && value <= 1)) throw new InvalidConfigError(`compaction.${key}`, `must be in (0, 1] (got ${value})`);
}

export function validateCompactionSettings(settings: CompactionSettings): void {
  requireInt(settings, 'contextWindow', 256);
  requireInt(settings, 'trigger', 1);
  requireInt(settings, 'keepRecentTokens', 0);
  requireInt(settings, 'keepRecentMessages', 0);
  requireInt(settings, 'keepFirstTurns', 0);
  requireInt(settings, 'chunkTokens', 64);
  requireInt(settings, 'maxSummaryTokens', 16);
  requireInt(settings, 'clipFirst', 0);
  requireInt(settings, 'clipLast', 1);
  requireInt(settings, 'clipBuffer', 0);
  requireInt(settings, 'toolOutputMaxLines', 1);
  requireInt(settings, 'transcriptSegmentTokens', 16);
  requireShare(settings, 'warnAt');
  requireShare(settings, 'summarizerInputShare');
  if (settings.trigger > settings.contextWindow) {
    throw new InvalidConfigError('compaction.trigger', `must be <= contextWindow (${settings.contextWindow})`);
  }
  if (settings.keepRecentTokens >= settings.trigger) {
    throw new InvalidConfigError('compaction.keepRecentTokens', `must be < trigger (${settings.trigger}) so compaction can make room`);
  }
}

/** Where things live and which remote services to use; read from the environment by `resolveRuntimeConfig`. */
export interface RuntimeConfig {
  /** Root folder of the embedded stores. `MEMFOLD_HOME`, default `./.memfold`. */
  home: string;
  /** PostgreSQL connection string (`postgres://` or `postgresql://`); unset means embedded PGlite in `{home}/pg`. `DATABASE_URL`. */
  databaseUrl?: string;
  /** LanceDB location (folder or `s3://...`). `LANCEDB_URI`, default `{home}/lancedb`. */
  lancedbUri: string;
  /** Scope of conversations sharing one store. `MEMFOLD_NAMESPACE`, default `default`. */
  namespace: string;
  /** OpenAI-compatible endpoint, an `http://` or `https://` URL. `OPENAI_BASE_URL` (the client's default when unset). */
  openaiBaseUrl?: string;
  /** `OPENAI_API_KEY`. */
  openaiApiKey?: string;
  /** Summaries come from this model when set, else from the offline extractive summarizer. `MEMFOLD_SUMMARY_MODEL`. */
  summaryModel?: string;
  /** Embeddings come from this model when set, else from the offline hashing embedder. `MEMFOLD_EMBEDDING_MODEL`. */
  embeddingModel?: string;
  /** The assistant's model, which picks the exact tokenizer when known. `MEMFOLD_MODEL`. */
  assistantModel?: string;
  /** Summarizer request timeout in ms. `MEMFOLD_MODEL_TIMEOUT_MS`, default 60,000. */
  modelTimeoutMs: number;
  /** Retries after the first attempt of a remote call. `MEMFOLD_MODEL_MAX_RETRIES`, default 2. */
  modelMaxRetries: number;
  /**
   * Total ms for one remote call (a summary or an embeddings request), queue waits, attempts and backoff
   * included; then a summary comes from the fallback and an embedding fails `embedding_error`.
   * `MEMFOLD_MODEL_DEADLINE_MS`, default twice `modelTimeoutMs` (120,000).
   */
  modelDeadlineMs: number;
  /** Remote calls in flight at once, summaries and embeddings together (one queue). `MEMFOLD_MODEL_CONCURRENCY`, default 4. */
  modelConcurrency: number;
  /**
   * Remote calls started per minute, summaries and embeddings together, spread evenly (one every 60,000 / rpm ms),
   * so a provider's rate limit slows the queue instead of answering 429 until retries run out. Retries count too.
   * `MEMFOLD_MODEL_RPM`; unset means no limit.
   */
  modelRequestsPerMinute?: number;
  /**
   * Timeouts or refused connections in a row after which a remote endpoint (summaries, embeddings) is not
   * called for `modelBreakerCooldownMs`; 0 turns the breaker off. `MEMFOLD_MODEL_BREAKER_FAILURES`, default 3.
   */
  modelBreakerFailures: number;
  /** How long an open breaker refuses calls before one trial call. `MEMFOLD_MODEL_BREAKER_COOLDOWN_MS`, default 60,000. */
  modelBreakerCooldownMs: number;
  /**
   * UTF-8 bytes one appended message may take (content, tool calls, name and ids together).
   * `MEMFOLD_MAX_MESSAGE_BYTES`, default 10 MiB; at most 128 MiB (a jsonb value must stay under 256 MiB).
   */
  maxMessageBytes: number;
}

/** 10 MiB: far above any real turn, low enough that a runaway tool output cannot flood the table. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** PostgreSQL refuses a jsonb value of 256 MiB or more; half of that leaves room for escaping. */
export const MAX_MESSAGE_BYTES_LIMIT = 128 * 1024 * 1024;

/** A maxMessageBytes value from any source (store option, override), refused naming `field`. */
export function validateMaxMessageBytes(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_MESSAGE_BYTES_LIMIT) {
    throw new InvalidConfigError(field, `must be an integer from 1 to ${MAX_MESSAGE_BYTES_LIMIT} (got ${String(value)})`);
  }
  return value;
}

/**
 * How each `resolveRuntimeConfig` override is checked, keyed by every RuntimeConfig field (so a new
 * field cannot be forgotten): a string, or an integer with the same bounds as its variable.
 */
const OVERRIDE_RULES: Record<keyof RuntimeConfig, 'string' | { min: number; max?: number }> = {
  home: 'string',
  databaseUrl: 'string',
  lancedbUri: 'string',
  namespace: 'string',
  openaiBaseUrl: 'string',
  openaiApiKey: 'string',
  summaryModel: 'string',
  embeddingModel: 'string',
  assistantModel: 'string',
  modelTimeoutMs: { min: 1 },
  modelMaxRetries: { min: 0 },
  modelDeadlineMs: { min: 1 },
  modelConcurrency: { min: 1 },
  modelRequestsPerMinute: { min: 1 },
  modelBreakerFailures: { min: 0 },
  modelBreakerCooldownMs: { min: 1 },
  maxMessageBytes: { min: 1, max: MAX_MESSAGE_BYTES_LIMIT },
};

/** Overrides come from code, not the environment: refuse unknown keys and wrong types, naming `config.<key>`. */
function checkOverrides(overrides: Partial<RuntimeConfig>): void {
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) throw new InvalidConfigError('config', 'must be an object of settings');
  for (const [key, value] of Object.entries(overrides)) {
    const rule = (OVERRIDE_RULES as Record<string, (typeof OVERRIDE_RULES)[keyof RuntimeConfig] | undefined>)[key];
    if (rule === undefined) throw new InvalidConfigError(`config.${key}`, 'unknown setting');
    if (value === undefined) continue;
    if (rule === 'string') {
      if (typeof value !== 'string' || value.trim() === '') throw new InvalidConfigError(`config.${key}`, 'must be a non-empty string');
    } else if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.min || (rule.max !== undefined && value > rule.max)) {
      const range = rule.max === undefined ? `>= ${rule.min}` : `from ${rule.min} to ${rule.max}`;
      throw new InvalidConfigError(`config.${key}`, `must be an integer ${range} (got ${String(value)})`);
    }
  }
}

function envInt(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  // Number() also reads "1e3", "0x10" and "1.0" as integers: only plain digits are a count.
  const value = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new InvalidConfigError(name, `must be an integer ${range} (got "${raw}")`);
  }
  return value;
}

function envOptionalInt(env: Record<string, string | undefined>, name: string, min: number): number | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : envInt(env, name, 0, min);
}

function envString(env: Record<string, string | undefined>, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

const DATABASE_URL_SCHEMES = ['postgres:', 'postgresql:'] as const;
const OPENAI_BASE_URL_SCHEMES = ['http:', 'https:'] as const;

/**
 * A connection URL with one of `schemes`, refused naming `field`. The value itself is never echoed:
 * it may carry a password (`postgres://user:secret@host/db`), so only its scheme is quoted.
 */
function requireUrl(value: string, field: string, schemes: readonly string[]): void {
  const example = schemes[0] === 'postgres:' ? 'postgres://user:password@host:5432/database' : 'http://127.0.0.1:11434/v1';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidConfigError(field, `must be a URL such as ${example} (the value set does not parse as one)`);
  }
  if (!schemes.includes(url.protocol)) {
    throw new InvalidConfigError(field, `must be a ${schemes.map((s) => s.slice(0, -1)).join(' or ')} URL such as ${example} (its scheme is "${url.protocol.slice(0, -1)}")`);
  }
  if (url.hostname === '' && schemes.includes('http:')) throw new InvalidConfigError(field, `must name a host, such as ${example}`);
}

export function resolveRuntimeConfig(
  overrides: Partial<RuntimeConfig> = {},
  env: Record<string, string | undefined> = process.env,
): RuntimeConfig {
  checkOverrides(overrides);
  const home = overrides.home ?? envString(env, 'MEMFOLD_HOME') ?? './.memfold';
  const modelTimeoutMs = overrides.modelTimeoutMs ?? envInt(env, 'MEMFOLD_MODEL_TIMEOUT_MS', DEFAULT_MODEL_TIMEOUT_MS, 1);
  const config: RuntimeConfig = {
    home,
    lancedbUri: overrides.lancedbUri ?? envString(env, 'LANCEDB_URI') ?? `${home.replace(/\/+$/, '')}/lancedb`,
    namespace: overrides.namespace ?? envString(env, 'MEMFOLD_NAMESPACE') ?? 'default',
    modelTimeoutMs,
    modelMaxRetries: overrides.modelMaxRetries ?? envInt(env, 'MEMFOLD_MODEL_MAX_RETRIES', DEFAULT_MODEL_MAX_RETRIES, 0),
    modelDeadlineMs: overrides.modelDeadlineMs ?? envInt(env, 'MEMFOLD_MODEL_DEADLINE_MS', defaultModelDeadlineMs(modelTimeoutMs), 1),
    modelConcurrency: overrides.modelConcurrency ?? envInt(env, 'MEMFOLD_MODEL_CONCURRENCY', DEFAULT_MODEL_CONCURRENCY, 1),
    modelBreakerFailures: overrides.modelBreakerFailures ?? envInt(env, 'MEMFOLD_MODEL_BREAKER_FAILURES', DEFAULT_MODEL_BREAKER_FAILURES, 0),
    modelBreakerCooldownMs:
      overrides.modelBreakerCooldownMs ?? envInt(env, 'MEMFOLD_MODEL_BREAKER_COOLDOWN_MS', DEFAULT_MODEL_BREAKER_COOLDOWN_MS, 1),
    maxMessageBytes:
      overrides.maxMessageBytes ?? envInt(env, 'MEMFOLD_MAX_MESSAGE_BYTES', DEFAULT_MAX_MESSAGE_BYTES, 1, MAX_MESSAGE_BYTES_LIMIT),
  };
  const optional: Array<[keyof RuntimeConfig, string]> = [
    ['databaseUrl', 'DATABASE_URL'],
    ['openaiBaseUrl', 'OPENAI_BASE_URL'],
    ['openaiApiKey', 'OPENAI_API_KEY'],
    ['summaryModel', 'MEMFOLD_SUMMARY_MODEL'],
    ['embeddingModel', 'MEMFOLD_EMBEDDING_MODEL'],
    ['assistantModel', 'MEMFOLD_MODEL'],
  ];
  for (const [key, name] of optional) {
    const value = (overrides[key] as string | undefined) ?? envString(env, name);
    if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
  }
  const requestsPerMinute = overrides.modelRequestsPerMinute ?? envOptionalInt(env, 'MEMFOLD_MODEL_RPM', 1);
  if (requestsPerMinute !== undefined) config.modelRequestsPerMinute = requestsPerMinute;
  // Named as the caller set them: `config.<key>` for an override, the variable otherwise.
  const source = (key: keyof RuntimeConfig, name: string) => (overrides[key] !== undefined ? `config.${key}` : name);
  if (config.databaseUrl !== undefined) requireUrl(config.databaseUrl, source('databaseUrl', 'DATABASE_URL'), DATABASE_URL_SCHEMES);
  if (config.openaiBaseUrl !== undefined) requireUrl(config.openaiBaseUrl, source('openaiBaseUrl', 'OPENAI_BASE_URL'), OPENAI_BASE_URL_SCHEMES);
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(config.namespace)) {
    throw new InvalidConfigError('namespace', 'must be 1-64 characters of letters, digits, "_", "." or "-"');
  }
  return config;
}
