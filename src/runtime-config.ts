/**
 * The resolved runtime configuration's shape, each field with its variable and default: the contract `config.ts`
 * fills and the composition root reads, apart from the parsing so importers of the type load no schema.
 */
import type { SummaryPromptMode } from './openai/openai-prompt-mode.js';

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
