/**
 * The two ways settings arrive, each checked by its own schema: overrides from code (`createMemfold({ config })`),
 * errors naming `config.<key>`, and the environment variables, errors naming the variable. `config.ts` merges them.
 */
import type { z } from 'zod';
import { parseWithSchema } from './conversation/schema-issues.js';
import { durationMsSchema, envDurationMs } from './duration-ms.js';
import { InvalidConfigError } from './errors.js';
import { SUMMARY_PROMPT_MODES, SUMMARY_PROMPT_MODE_RULE } from './openai/openai-prompt-mode.js';
import { MAX_MESSAGE_BYTES_LIMIT } from './persistence/message-size-limit.js';
import type { RuntimeConfig } from './runtime-config.js';
import { onDemand, zod } from './zod-on-demand.js';

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
  const schema = zod().number({ error }).int({ error }).min(min, { error });
  return max === undefined ? schema : schema.max(max, { error });
}

const nonEmpty = () =>
  zod()
    .string({ error: 'must be a non-empty string' })
    .refine((value) => value.trim() !== '', 'must be a non-empty string');

const overrideStorageOptions = () =>
  zod().record(zod().string().min(1, 'keys must be non-empty'), zod().string({ error: 'must be a string' }), {
    error: 'must be an object of string values',
  });

/**
 * The overrides `createMemfold({ config })` takes, keyed by every RuntimeConfig field (so a new field
 * cannot be forgotten): a string, or an integer with the same bounds as its variable. Unknown keys are
 * refused; errors name `config.<key>`.
 */
export const overridesSchema = onDemand(() => {
  const z = zod();
  const overrideString = nonEmpty();
  return z
    .strictObject(
      {
        home: overrideString,
        databaseUrl: overrideString,
        databaseSchema: z.string({ error: 'must be a string' }),
        lancedbUri: overrideString,
        lancedbStorageOptions: overrideStorageOptions(),
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
});

/** A count from the environment: plain digits only (Number() would also read "1e3", "0x10" and "1.0"), within bounds. */
function envInt(min: number, max?: number) {
  const z = zod();
  return z.string().transform((raw, ctx) => {
    const value = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
    if (Number.isSafeInteger(value) && value >= min && (max === undefined || value <= max)) return value;
    ctx.issues.push({ code: 'custom', message: `must be an integer ${rangeText(min, max)} (got "${raw}")`, input: raw });
    return z.NEVER;
  });
}

const textVar = () =>
  zod()
    .string()
    .transform((raw) => raw.trim());

const flagVar = () =>
  zod()
    .string()
    .transform((raw, ctx) => {
      const value = raw.trim().toLowerCase();
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      ctx.issues.push({ code: 'custom', message: `must be true or false (got "${raw}")`, input: raw });
      return zod().NEVER;
    });

const envPromptMode = () =>
  textVar().pipe(zod().enum(SUMMARY_PROMPT_MODES, { error: (issue) => `${SUMMARY_PROMPT_MODE_RULE} (got "${String(issue.input)}")` }));

/** The variables memfold reads; a blank one counts as unset. Errors name the variable. */
const envSchema = onDemand(() => {
  const envText = textVar();
  const envFlag = flagVar();
  return zod()
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
      MEMFOLD_SUMMARY_PROMPT: envPromptMode(),
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
});

export type EnvValues = z.output<ReturnType<typeof envSchema>>;

/** The variables memfold reads from `env`, blank ones left out, parsed. */
export function readEnv(env: Record<string, string | undefined>): EnvValues {
  const schema = envSchema();
  const set = Object.keys(schema.shape).flatMap((name) => {
    const raw = env[name];
    return raw === undefined || raw.trim() === '' ? [] : [[name, raw] as const];
  });
  return parseWithSchema(schema, Object.fromEntries(set), { toError: (field, rule) => new InvalidConfigError(field, rule) });
}
