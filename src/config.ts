/**
 * The runtime configuration: the environment (and overrides from code) read into a `RuntimeConfig`.
 * Compaction settings live in `compaction/compaction-settings.ts`, the message size limit in
 * `persistence/message-size-limit.ts`, model defaults in `openai/openai-defaults.ts`.
 */
import { InvalidConfigError } from './errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_LIMIT } from './persistence/message-size-limit.js';
import {
  DEFAULT_MODEL_BREAKER_COOLDOWN_MS,
  DEFAULT_MODEL_BREAKER_FAILURES,
  DEFAULT_MODEL_CONCURRENCY,
  DEFAULT_MODEL_MAX_RETRIES,
  DEFAULT_MODEL_TIMEOUT_MS,
  defaultModelDeadlineMs,
} from './openai/openai-defaults.js';

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
