/**
 * The runtime configuration: the environment (and overrides from code) read into a `RuntimeConfig`
 * (`runtime-config.ts`), each source checked by its schema (`config-schemas.ts`), then merged and validated here.
 * Compaction settings live in `compaction/compaction-settings.ts`, the message size limit in
 * `persistence/message-size-limit.ts`, model defaults in `openai/openai-defaults.ts`.
 */
import {
  DEFAULT_S3_DEADLINE_MS,
  DEFAULT_S3_TIMEOUT_MS,
  isObjectStoreUri,
  objectStoreTimeouts,
  s3StorageOptionsFromEnv,
} from './archive/lancedb/lancedb-storage-options.js';
import { DEFAULT_JOB_SCHEMA } from './background/compaction-queue.js';
import { JOB_DEFAULTS } from './background/job-defaults.js';
import { type EnvValues, overridesSchema, readEnv } from './config-schemas.js';
import { parseWithSchema } from './conversation/schema-issues.js';
import { InvalidConfigError } from './errors.js';
import {
  DEFAULT_MODEL_BREAKER_COOLDOWN_MS,
  DEFAULT_MODEL_BREAKER_FAILURES,
  DEFAULT_MODEL_CONCURRENCY,
  DEFAULT_MODEL_MAX_RETRIES,
  DEFAULT_MODEL_TIMEOUT_MS,
  defaultModelDeadlineMs,
} from './openai/openai-defaults.js';
import { DEFAULT_DATABASE_SCHEMA, databaseSchemaProblem } from './persistence/database-schema.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './persistence/message-size-limit.js';
import type { RuntimeConfig } from './runtime-config.js';

export type { RuntimeConfig } from './runtime-config.js';

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
  const given = parseWithSchema(overridesSchema(), overrides, { prefix: 'config', toError: (field, rule) => new InvalidConfigError(field, rule) });
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
