/**
 * The runtime configuration: the environment (and overrides from code) read into a `RuntimeConfig`.
 * Compaction settings live in `compaction/compaction-settings.ts`, the message size limit in
 * `persistence/message-size-limit.ts`, model defaults in `openai/openai-defaults.ts`.
 */
import { z } from 'zod';
import {
  DEFAULT_S3_DEADLINE_MS,
  DEFAULT_S3_TIMEOUT_MS,
  isObjectStoreUri,
  objectStoreTimeouts,
  s3StorageOptionsFromEnv,
} from './archive/lancedb/lancedb-storage-options.js';
import { parseWithSchema } from './conversation/schema-issues.js';
import { durationMsSchema, envDurationMs } from './duration-ms.js';
import { InvalidConfigError } from './errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_LIMIT } from './persistence/message-size-limit.js';
import { DEFAULT_DATABASE_SCHEMA, databaseSchemaProblem } from './persistence/database-schema.js';
import { DEFAULT_JOB_SCHEMA } from './background/compaction-queue.js';
import { JOB_DEFAULTS } from './background/job-defaults.js';
import {
  DEFAULT_MODEL_BREAKER_COOLDOWN_MS,
  DEFAULT_MODEL_BREAKER_FAILURES,
  DEFAULT_MODEL_CONCURRENCY,
  DEFAULT_MODEL_MAX_RETRIES,
  DEFAULT_MODEL_TIMEOUT_MS,
  defaultModelDeadlineMs,
} from './openai/openai-defaults.js';
import { SUMMARY_PROMPT_MODES, SUMMARY_PROMPT_MODE_RULE, type SummaryPromptMode } from './openai/openai-prompt-mode.js';

/** Where things live and which remote services to use; read from the environment by `resolveRuntimeConfig`. */
export interface RuntimeConfig {
  /** Root folder of the embedded stores. `MEMFOLD_HOME`, default `./.memfold`. */
  home: string;
  /**
   * PostgreSQL connection string (`postgres://` or `postgresql://`); unset means embedded PGlite in `{home}/pg`.
   * `MEMFOLD_DATABASE_URL`, else `DATABASE_URL`.
   */
  databaseUrl?: string;
  /**
   * The PostgreSQL schema of memfold's tables (PGlite's too), apart from an application's own: a lowercase SQL
   * identifier, not `pg_*`, `information_schema` or `memfold_jobs` (the job queue's). A store made before memfold had
   * its own schema is moved there from `public` on its next migration. `MEMFOLD_DATABASE_SCHEMA`, default `memfold`.
   */
  databaseSchema: string;
  /** LanceDB location (folder or `s3://...`). `LANCEDB_URI`, default `{home}/lancedb`. */
  lancedbUri: string;
  /**
   * LanceDB storage options of an object-store `lancedbUri` (absent for a folder): from the `MEMFOLD_S3_*`
   * variables (else `AWS_*`) for `s3://` and `s3+ddb://` (`archive/lancedb/lancedb-storage-options.ts`), with
   * `config.lancedbStorageOptions` laid over them key by key.
   */
  lancedbStorageOptions?: Record<string, string>;
  /**
   * Only one process writes the archive: skip the check, on opening an `s3://` archive on a custom endpoint,
   * that the store refuses a second create of one key (which LanceDB's commits rely on when several write).
   * `MEMFOLD_S3_SINGLE_WRITER`, default false.
   */
  s3SingleWriter?: boolean;
  /**
   * Each attempt of one request to an object-store archive (`s3://`, `gs://`, `az://`...), in ms: LanceDB's `timeout`
   * storage option, `connect_timeout` at most 5,000 of it; also each request of the conditional-PUT check on opening.
   * `MEMFOLD_S3_TIMEOUT_MS`, default 10,000.
   */
  s3TimeoutMs: number;
  /**
   * Opening an object-store archive and each read of it (memory_read's search, reads by label, listings), retries
   * included, in ms; then the call fails `archive_error` naming the endpoint and what it waited for. Writes are not
   * cut short (an abandoned write could still land): `s3TimeoutMs` ends them. `MEMFOLD_S3_DEADLINE_MS`, default 60,000.
   */
  s3DeadlineMs: number;
  /** Scope of conversations sharing one store. `MEMFOLD_NAMESPACE`, default `default`. */
  namespace: string;
  /** OpenAI-compatible endpoint, an `http://` or `https://` URL. `MEMFOLD_OPENAI_BASE_URL`, else `OPENAI_BASE_URL` (the client's default when unset). */
  openaiBaseUrl?: string;
  /** `MEMFOLD_OPENAI_API_KEY`, else `OPENAI_API_KEY`. */
  openaiApiKey?: string;
  /**
   * The model that writes summaries. `MEMFOLD_SUMMARY_MODEL`; unset: with an endpoint configured (`OPENAI_BASE_URL` or
   * `OPENAI_API_KEY`), a cheap model of a known provider, else `MEMFOLD_MODEL`; otherwise the offline extractive
   * summarizer (`openai/summary-model.ts`).
   */
  summaryModel?: string;
  /**
   * Tokens the summary model accepts; requests stay within `summarizerInputShare` (80%) of it. Set it for a small
   * local model (an Ollama model serves 2,048 to 8,192 unless told otherwise). `MEMFOLD_SUMMARY_CONTEXT_WINDOW`,
   * default 128,000; at least 1,024.
   */
  summaryContextWindow?: number;
  /**
   * The built-in prompt of that model: `structured` (seven sections per chunk) or `update` (each chunk merged into
   * the summary so far). `MEMFOLD_SUMMARY_PROMPT`; unset means the adapter's default, `structured`.
   */
  summaryPromptMode?: SummaryPromptMode;
  /** Embeddings come from this model when set, else from the offline hashing embedder. `MEMFOLD_EMBEDDING_MODEL`. */
  embeddingModel?: string;
  /** The assistant's model, which picks the exact tokenizer when known. `MEMFOLD_MODEL`. */
  assistantModel?: string;
  /** Summarizer request timeout in ms. `MEMFOLD_MODEL_TIMEOUT_MS`, default 60,000; like every ms setting, at most 2^31-1 (`duration-ms.ts`). */
  modelTimeoutMs: number;
  /** Retries after the first attempt of a remote call. `MEMFOLD_MODEL_MAX_RETRIES`, default 2. */
  modelMaxRetries: number;
  /**
   * Total ms for one remote call (a summary or an embeddings request), queue waits, attempts and backoff
   * included; then a summary comes from the fallback and an embedding fails `embedding_error`.
   * `MEMFOLD_MODEL_DEADLINE_MS`, default twice `modelTimeoutMs` (120,000), at most 2^31-1.
   */
  modelDeadlineMs: number;
  /** Remote calls in flight at once, summaries and embeddings together (one queue). `MEMFOLD_MODEL_CONCURRENCY`, default 4. */
  modelConcurrency: number;
  /**
   * The provider's rate limit: remote calls started per minute, summaries and embeddings together, retries included,
   * spread evenly (one every 60,000 / rpm ms), so the limit slows the queue instead of answering 429 until retries run
   * out. With PostgreSQL (`databaseUrl`) it is shared by every memfold process on that database using the same endpoint
   * and API key: their starts are reserved there (`openai/shared-rate-limit.ts`, spaced 2.5% wider, at most 10 ms, for
   * jitter), so give each process the provider's whole limit. With PGlite or the memory store, per process.
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
  /** Retries of a failed background compaction job, then the dead-letter queue. `MEMFOLD_JOB_RETRIES`, default 2. */
  jobRetries: number;
  /**
   * A running job whose worker sent no heartbeat for this long is retried by another worker (pg-boss; 10 to 86,400).
   * `MEMFOLD_JOB_HEARTBEAT_SECONDS`, default 30.
   */
  jobHeartbeatSeconds: number;
  /** How often pg-boss looks for dead workers and due retries. `MEMFOLD_JOB_SUPERVISE_SECONDS`, default 10; 1 to 86,400. */
  jobSuperviseSeconds: number;
}

/**
 * The job timers' longest period, in seconds: a day, pg-boss's own bound on its supervision interval; a heartbeat
 * interval past about 49 days would overflow Node's timer (pg-boss refreshes every half heartbeat, in ms).
 */
const MAX_JOB_SECONDS = 86_400;

function rangeText(min: number, max?: number): string {
  return max === undefined ? `>= ${min}` : `from ${min} to ${max}`;
}

/** An override from code: an integer within the bounds of its variable. */
function overrideInt(min: number, max?: number) {
  const error = (issue: { input?: unknown }) => `must be an integer ${rangeText(min, max)} (got ${String(issue.input)})`;
  const schema = z.number({ error }).int({ error }).min(min, { error });
  return max === undefined ? schema : schema.max(max, { error });
}

const overrideString = z.string({ error: 'must be a non-empty string' }).refine((value) => value.trim() !== '', 'must be a non-empty string');

const overrideStorageOptions = z.record(z.string().min(1, 'keys must be non-empty'), z.string({ error: 'must be a string' }), {
  error: 'must be an object of string values',
});

/**
 * The overrides `createMemfold({ config })` takes, keyed by every RuntimeConfig field (so a new field
 * cannot be forgotten): a string, or an integer with the same bounds as its variable. Unknown keys are
 * refused; errors name `config.<key>`.
 */
const overridesSchema = z
  .strictObject(
    {
      home: overrideString,
      databaseUrl: overrideString,
      databaseSchema: z.string({ error: 'must be a string' }),
      lancedbUri: overrideString,
      lancedbStorageOptions: overrideStorageOptions,
      s3SingleWriter: z.boolean({ error: 'must be a boolean' }),
      s3TimeoutMs: durationMsSchema(1, { integer: true }),
      s3DeadlineMs: durationMsSchema(1, { integer: true }),
      namespace: overrideString,
      openaiBaseUrl: overrideString,
      openaiApiKey: overrideString,
      summaryModel: overrideString,
      summaryContextWindow: overrideInt(1_024),
      summaryPromptMode: z.enum(SUMMARY_PROMPT_MODES, { error: (issue) => `${SUMMARY_PROMPT_MODE_RULE} (got ${JSON.stringify(issue.input)})` }),
      embeddingModel: overrideString,
      assistantModel: overrideString,
      modelTimeoutMs: durationMsSchema(1, { integer: true }),
      modelMaxRetries: overrideInt(0),
      modelDeadlineMs: durationMsSchema(1, { integer: true }),
      modelConcurrency: overrideInt(1),
      modelRequestsPerMinute: overrideInt(1),
      modelBreakerFailures: overrideInt(0),
      modelBreakerCooldownMs: durationMsSchema(1, { integer: true }),
      maxMessageBytes: overrideInt(1, MAX_MESSAGE_BYTES_LIMIT),
      jobRetries: overrideInt(0),
      jobHeartbeatSeconds: overrideInt(10, MAX_JOB_SECONDS),
      jobSuperviseSeconds: overrideInt(1, MAX_JOB_SECONDS),
    } satisfies Record<keyof RuntimeConfig, z.ZodType>,
    { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown setting' : undefined) },
  )
  .partial();

/** A count from the environment: plain digits only (Number() would also read "1e3", "0x10" and "1.0"), within bounds. */
function envInt(min: number, max?: number) {
  return z.string().transform((raw, ctx) => {
    const value = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
    if (Number.isSafeInteger(value) && value >= min && (max === undefined || value <= max)) return value;
    ctx.issues.push({ code: 'custom', message: `must be an integer ${rangeText(min, max)} (got "${raw}")`, input: raw });
    return z.NEVER;
  });
}

const envText = z.string().transform((raw) => raw.trim());

const envFlag = z.string().transform((raw, ctx) => {
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  ctx.issues.push({ code: 'custom', message: `must be true or false (got "${raw}")`, input: raw });
  return z.NEVER;
});

const envPromptMode = envText.pipe(z.enum(SUMMARY_PROMPT_MODES, { error: (issue) => `${SUMMARY_PROMPT_MODE_RULE} (got "${String(issue.input)}")` }));

/** The variables memfold reads; a blank one counts as unset. Errors name the variable. */
const envSchema = z
  .object({
    MEMFOLD_HOME: envText,
    MEMFOLD_DATABASE_URL: envText,
    DATABASE_URL: envText,
    MEMFOLD_DATABASE_SCHEMA: envText,
    LANCEDB_URI: envText,
    MEMFOLD_S3_SINGLE_WRITER: envFlag,
    MEMFOLD_S3_TIMEOUT_MS: envDurationMs(1),
    MEMFOLD_S3_DEADLINE_MS: envDurationMs(1),
    MEMFOLD_NAMESPACE: envText,
    MEMFOLD_OPENAI_BASE_URL: envText,
    OPENAI_BASE_URL: envText,
    MEMFOLD_OPENAI_API_KEY: envText,
    OPENAI_API_KEY: envText,
    MEMFOLD_SUMMARY_MODEL: envText,
    MEMFOLD_SUMMARY_CONTEXT_WINDOW: envInt(1_024),
    MEMFOLD_SUMMARY_PROMPT: envPromptMode,
    MEMFOLD_EMBEDDING_MODEL: envText,
    MEMFOLD_MODEL: envText,
    MEMFOLD_MODEL_TIMEOUT_MS: envDurationMs(1),
    MEMFOLD_MODEL_MAX_RETRIES: envInt(0),
    MEMFOLD_MODEL_DEADLINE_MS: envDurationMs(1),
    MEMFOLD_MODEL_CONCURRENCY: envInt(1),
    MEMFOLD_MODEL_RPM: envInt(1),
    MEMFOLD_MODEL_BREAKER_FAILURES: envInt(0),
    MEMFOLD_MODEL_BREAKER_COOLDOWN_MS: envDurationMs(1),
    MEMFOLD_MAX_MESSAGE_BYTES: envInt(1, MAX_MESSAGE_BYTES_LIMIT),
    MEMFOLD_JOB_RETRIES: envInt(0),
    MEMFOLD_JOB_HEARTBEAT_SECONDS: envInt(10, MAX_JOB_SECONDS),
    MEMFOLD_JOB_SUPERVISE_SECONDS: envInt(1, MAX_JOB_SECONDS),
  })
  .partial();

type EnvValues = z.output<typeof envSchema>;

/** The variables memfold reads from `env`, blank ones left out, parsed. */
function readEnv(env: Record<string, string | undefined>): EnvValues {
  const set = Object.keys(envSchema.shape).flatMap((name) => {
    const raw = env[name];
    return raw === undefined || raw.trim() === '' ? [] : [[name, raw] as const];
  });
  return parseWithSchema(envSchema, Object.fromEntries(set), { toError: (field, rule) => new InvalidConfigError(field, rule) });
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
    throw new InvalidConfigError(
      field,
      `must be a ${schemes.map((s) => s.slice(0, -1)).join(' or ')} URL such as ${example} (its scheme is "${url.protocol.slice(0, -1)}")`,
    );
  }
  if (url.hostname === '' && schemes.includes('http:')) throw new InvalidConfigError(field, `must name a host, such as ${example}`);
}

export function resolveRuntimeConfig(overrides: Partial<RuntimeConfig> = {}, env: Record<string, string | undefined> = process.env): RuntimeConfig {
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) throw new InvalidConfigError('config', 'must be an object of settings');
  const given = parseWithSchema(overridesSchema, overrides, { prefix: 'config', toError: (field, rule) => new InvalidConfigError(field, rule) });
  const vars = readEnv(env);
  const home = given.home ?? vars.MEMFOLD_HOME ?? './.memfold';
  const modelTimeoutMs = given.modelTimeoutMs ?? vars.MEMFOLD_MODEL_TIMEOUT_MS ?? DEFAULT_MODEL_TIMEOUT_MS;
  const optional = {
    // memfold's own names first: a host application's DATABASE_URL or OPENAI_* may be meant for something else.
    databaseUrl: given.databaseUrl ?? vars.MEMFOLD_DATABASE_URL ?? vars.DATABASE_URL,
    openaiBaseUrl: given.openaiBaseUrl ?? vars.MEMFOLD_OPENAI_BASE_URL ?? vars.OPENAI_BASE_URL,
    openaiApiKey: given.openaiApiKey ?? vars.MEMFOLD_OPENAI_API_KEY ?? vars.OPENAI_API_KEY,
    summaryModel: given.summaryModel ?? vars.MEMFOLD_SUMMARY_MODEL,
    summaryContextWindow: given.summaryContextWindow ?? vars.MEMFOLD_SUMMARY_CONTEXT_WINDOW,
    summaryPromptMode: given.summaryPromptMode ?? vars.MEMFOLD_SUMMARY_PROMPT,
    embeddingModel: given.embeddingModel ?? vars.MEMFOLD_EMBEDDING_MODEL,
    assistantModel: given.assistantModel ?? vars.MEMFOLD_MODEL,
    modelRequestsPerMinute: given.modelRequestsPerMinute ?? vars.MEMFOLD_MODEL_RPM,
    s3SingleWriter: given.s3SingleWriter ?? vars.MEMFOLD_S3_SINGLE_WRITER,
  };
  const lancedbUri = given.lancedbUri ?? vars.LANCEDB_URI ?? `${home.replace(/\/+$/, '')}/lancedb`;
  const s3TimeoutMs = given.s3TimeoutMs ?? vars.MEMFOLD_S3_TIMEOUT_MS ?? DEFAULT_S3_TIMEOUT_MS;
  // The S3 variables matter only for an object-store URI; a folder archive never reads them.
  const storageOptions = isObjectStoreUri(lancedbUri)
    ? { ...objectStoreTimeouts(s3TimeoutMs), ...s3StorageOptionsFromEnv(lancedbUri, env), ...given.lancedbStorageOptions }
    : given.lancedbStorageOptions;
  const config: RuntimeConfig = {
    home,
    databaseSchema: given.databaseSchema ?? vars.MEMFOLD_DATABASE_SCHEMA ?? DEFAULT_DATABASE_SCHEMA,
    lancedbUri,
    ...(storageOptions && Object.keys(storageOptions).length > 0 ? { lancedbStorageOptions: storageOptions } : {}),
    s3TimeoutMs,
    s3DeadlineMs: given.s3DeadlineMs ?? vars.MEMFOLD_S3_DEADLINE_MS ?? DEFAULT_S3_DEADLINE_MS,
    namespace: given.namespace ?? vars.MEMFOLD_NAMESPACE ?? 'default',
    modelTimeoutMs,
    modelMaxRetries: given.modelMaxRetries ?? vars.MEMFOLD_MODEL_MAX_RETRIES ?? DEFAULT_MODEL_MAX_RETRIES,
    modelDeadlineMs: given.modelDeadlineMs ?? vars.MEMFOLD_MODEL_DEADLINE_MS ?? defaultModelDeadlineMs(modelTimeoutMs),
    modelConcurrency: given.modelConcurrency ?? vars.MEMFOLD_MODEL_CONCURRENCY ?? DEFAULT_MODEL_CONCURRENCY,
    modelBreakerFailures: given.modelBreakerFailures ?? vars.MEMFOLD_MODEL_BREAKER_FAILURES ?? DEFAULT_MODEL_BREAKER_FAILURES,
    modelBreakerCooldownMs: given.modelBreakerCooldownMs ?? vars.MEMFOLD_MODEL_BREAKER_COOLDOWN_MS ?? DEFAULT_MODEL_BREAKER_COOLDOWN_MS,
    maxMessageBytes: given.maxMessageBytes ?? vars.MEMFOLD_MAX_MESSAGE_BYTES ?? DEFAULT_MAX_MESSAGE_BYTES,
    jobRetries: given.jobRetries ?? vars.MEMFOLD_JOB_RETRIES ?? JOB_DEFAULTS.retries,
    jobHeartbeatSeconds: given.jobHeartbeatSeconds ?? vars.MEMFOLD_JOB_HEARTBEAT_SECONDS ?? JOB_DEFAULTS.heartbeatSeconds,
    jobSuperviseSeconds: given.jobSuperviseSeconds ?? vars.MEMFOLD_JOB_SUPERVISE_SECONDS ?? JOB_DEFAULTS.superviseSeconds,
    // Unset optional settings stay absent rather than `undefined`.
    ...(Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)) as Partial<RuntimeConfig>),
  };
  // Named as the caller set them: `config.<key>` for an override, else the variable that gave the value.
  const source = (key: keyof RuntimeConfig, own: keyof EnvValues, generic: string) =>
    given[key] !== undefined ? `config.${key}` : vars[own] !== undefined ? own : generic;
  if (config.databaseUrl !== undefined) requireUrl(config.databaseUrl, source('databaseUrl', 'MEMFOLD_DATABASE_URL', 'DATABASE_URL'), DATABASE_URL_SCHEMES);
  const schemaSource = given.databaseSchema !== undefined ? 'config.databaseSchema' : 'MEMFOLD_DATABASE_SCHEMA';
  const schemaProblem = databaseSchemaProblem(config.databaseSchema);
  if (schemaProblem !== undefined) throw new InvalidConfigError(schemaSource, schemaProblem);
  if (config.databaseSchema === DEFAULT_JOB_SCHEMA) {
    throw new InvalidConfigError(schemaSource, `must not be "${DEFAULT_JOB_SCHEMA}": the background job queue (pg-boss) keeps its tables there`);
  }
  if (config.openaiBaseUrl !== undefined) {
    requireUrl(config.openaiBaseUrl, source('openaiBaseUrl', 'MEMFOLD_OPENAI_BASE_URL', 'OPENAI_BASE_URL'), OPENAI_BASE_URL_SCHEMES);
  }
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(config.namespace)) {
    throw new InvalidConfigError('namespace', 'must be 1-64 characters of letters, digits, "_", "." or "-"');
  }
  return config;
}
