/**
 * The adapters the configuration names, built for `createMemfold`: the remote call queue, the summarizer (a model
 * with the extractive fallback, or the extractive one), the embedder, and the stores.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Archive } from './archive/archive.js';
import { checkArchiveBinding } from './archive-binding.js';
import { isObjectStoreUri } from './archive/lancedb/lancedb-storage-options.js';
import { checkConditionalPut } from './archive/lancedb/s3-conditional-put.js';
import { withinDeadline, withReadDeadline } from './archive/archive-deadline.js';
import { openOnFirstUse } from './archive/on-first-use-archive.js';
import type { RuntimeConfig } from './config.js';
import type { Embedder } from './embedding/embedder.js';
import { MemfoldError } from './errors.js';
import { createHashingEmbedder } from './embedding/hashing-embedder.js';
import { createCircuitBreaker } from './openai/openai-circuit-breaker.js';
import { createOpenAIEmbedder } from './openai/openai-embedder.js';
import { DEFAULT_OPENAI_BASE_URL, PLACEHOLDER_API_KEY } from './openai/openai-defaults.js';
import type { SummaryPromptMode } from './openai/openai-prompt-mode.js';
import { createModelQueue, rateLimitedQueueOptions, type ModelQueue } from './openai/openai-queue.js';
import { createOpenAISummarizer } from './openai/openai-summarizer.js';
import { sharedRateGate, type ReserveRateSlot } from './openai/shared-rate-limit.js';
import type { SummaryModelChoice } from './openai/summary-model.js';
import { createKyselyPersistence, lanceArchiveIdentity, openLanceArchive } from './on-demand-adapters.js';
import type { PersistenceProvider } from './persistence/persistence-provider.js';
import { createExtractiveSummarizer } from './summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from './summarizer/summarizer.js';
import { withFallback } from './summarizer/with-fallback.js';
import { ARCHIVE_IDENTITY_TABLE } from './archive/archive-identity-table.js';

function breakerOf(config: RuntimeConfig) {
  return createCircuitBreaker({ failures: config.modelBreakerFailures, cooldownMs: config.modelBreakerCooldownMs });
}

/**
 * The one queue of a memfold's remote calls: summaries and embeddings share `MEMFOLD_MODEL_CONCURRENCY`
 * and `MEMFOLD_MODEL_RPM`, since they usually go to the same endpoint and its limits count both. With
 * `sharedSlots` (the database's `reserveRateSlot`), the rate is kept over every process reserving from it,
 * under `rateLimitKey(config)`; without, by this process alone.
 */
export function remoteCallQueue(config: RuntimeConfig, sharedSlots?: ReserveRateSlot): ModelQueue {
  const rpm = config.modelRequestsPerMinute;
  if (rpm === undefined || sharedSlots === undefined) return createModelQueue(rateLimitedQueueOptions(config.modelConcurrency, rpm));
  return createModelQueue({
    concurrency: config.modelConcurrency,
    admit: sharedRateGate({ key: rateLimitKey(config), requestsPerMinute: rpm, reserve: sharedSlots }),
  });
}

/**
 * The name of the provider limit the configured endpoint counts against: its URL (without credentials or query;
 * the `openai` client's default when none is configured) and a short hash of the API key, never the key itself.
 * Another key or endpoint is another limit.
 */
export function rateLimitKey(config: Pick<RuntimeConfig, 'openaiBaseUrl' | 'openaiApiKey'>): string {
  const url = new URL(config.openaiBaseUrl ?? DEFAULT_OPENAI_BASE_URL);
  const endpoint = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  const keyHash = createHash('sha256')
    .update(config.openaiApiKey ?? PLACEHOLDER_API_KEY)
    .digest('hex')
    .slice(0, 12);
  return `${endpoint} key:${keyHash}`;
}

export function buildSummarizer(
  config: RuntimeConfig,
  choice: SummaryModelChoice,
  queue: ModelQueue,
  prompt: string | undefined,
  promptMode: SummaryPromptMode | undefined,
): Summarizer {
  const extractive = createExtractiveSummarizer();
  if (!choice.model) return extractive;
  const remote = createOpenAISummarizer({
    model: choice.model,
    ...(config.summaryContextWindow ? { contextWindow: config.summaryContextWindow } : {}),
    timeoutMs: config.modelTimeoutMs,
    deadlineMs: config.modelDeadlineMs,
    maxRetries: config.modelMaxRetries,
    queue,
    breaker: breakerOf(config),
    ...(prompt ? { prompt } : {}),
    ...(promptMode ? { promptMode } : {}),
    ...(config.openaiBaseUrl ? { baseURL: config.openaiBaseUrl } : {}),
    ...(config.openaiApiKey ? { apiKey: config.openaiApiKey } : {}),
  });
  return withFallback(remote, extractive);
}

/**
 * The configured embedder. A remote one is not called here: its vector size is learned from its first
 * answer, and the archive takes it from the table meanwhile (or creates the table on the first write), so
 * an unreachable endpoint stops archive writes, never opening, appends or reads.
 */
export function buildEmbedder(config: RuntimeConfig, queue: ModelQueue): Embedder {
  if (!config.embeddingModel) return createHashingEmbedder();
  return createOpenAIEmbedder({
    model: config.embeddingModel,
    timeoutMs: config.modelTimeoutMs,
    deadlineMs: config.modelDeadlineMs,
    maxRetries: config.modelMaxRetries,
    queue,
    breaker: breakerOf(config),
    ...(config.openaiBaseUrl ? { baseURL: config.openaiBaseUrl } : {}),
    ...(config.openaiApiKey ? { apiKey: config.openaiApiKey } : {}),
  });
}

export async function openPersistence(config: RuntimeConfig, migrate: boolean): Promise<PersistenceProvider> {
  const common = { namespace: config.namespace, maxMessageBytes: config.maxMessageBytes, migrate, schema: config.databaseSchema };
  if (config.databaseUrl) return createKyselyPersistence({ dialect: 'postgres', databaseUrl: config.databaseUrl, ...common });
  // The directory lock creates the folder, and says which folder when it cannot.
  const dataDir = path.join(config.home, 'pg');
  return createKyselyPersistence({ dialect: 'pglite', dataDir, ...common });
}

/** Whether `uri` names a folder rather than a `scheme://` location. */
function isFolder(uri: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(uri);
}

/** The archive's location as the live store records it: a folder made absolute, a `scheme://` URI as given. */
export function archiveLocation(config: Pick<RuntimeConfig, 'lancedbUri'>): string {
  return isFolder(config.lancedbUri) ? path.resolve(config.lancedbUri) : config.lancedbUri;
}

/** The id the configured archive keeps inside itself; `assign` gives it that one (making its folder) when it has none. */
export async function archiveIdentityOf(config: RuntimeConfig, assign?: string): Promise<string | undefined> {
  if (isFolder(config.lancedbUri)) {
    // Reading only: a folder that is not there holds no identity, and connecting would create it.
    if (assign === undefined && !existsSync(config.lancedbUri)) return undefined;
    await mkdir(config.lancedbUri, { recursive: true });
  }
  const storageOptions = config.lancedbStorageOptions;
  return lanceArchiveIdentity({ uri: config.lancedbUri, ...(assign !== undefined ? { assign } : {}), ...(storageOptions ? { storageOptions } : {}) });
}

/**
 * The LanceDB archive at `lancedbUri`. An `s3://` archive on an S3-compatible endpoint is refused when the store
 * ignores `If-None-Match` on PUT (`s3-conditional-put.ts`): there, concurrent writers would replace each other's
 * commits without an error, so losing archived batches silently; `s3SingleWriter` says no one else writes.
 * `readOnly` opens it for reading alone (`LanceArchiveOptions.readOnly`).
 */
export async function openArchive(
  config: RuntimeConfig,
  embedder: Embedder,
  onWarning: (message: string, error: unknown) => void,
  { readOnly = false }: { readOnly?: boolean } = {},
): Promise<Archive> {
  const storageOptions = config.lancedbStorageOptions;
  // A reader (`readOnly`) makes no folder and commits nothing, so it needs no check of conditional writes.
  if (isFolder(config.lancedbUri)) {
    if (!readOnly) await mkdir(config.lancedbUri, { recursive: true });
  } else if (
    !readOnly &&
    isObjectStoreUri(config.lancedbUri) &&
    storageOptions &&
    !config.s3SingleWriter &&
    (await checkConditionalPut(config.lancedbUri, storageOptions, { timeoutMs: config.s3TimeoutMs })) === 'unsupported'
  ) {
    throw new MemfoldError(
      'archive_error',
      `LanceDB archive open failed: the S3 endpoint ${new URL(storageOptions.aws_endpoint!).origin} ignores If-None-Match on PUT, ` +
        "so two processes writing the archive would overwrite each other's commits. Use a store with conditional writes " +
        '(AWS S3, MinIO, Cloudflare R2), an s3+ddb:// URI with a DynamoDB table, or set MEMFOLD_S3_SINGLE_WRITER=true ' +
        'when only one process writes it.',
    );
  }
  const opening = openLanceArchive({
    uri: config.lancedbUri,
    embedder,
    namespace: config.namespace,
    onWarning,
    ...(readOnly ? { readOnly } : {}),
    ...(storageOptions ? { storageOptions } : {}),
  });
  if (!isObjectStoreUri(config.lancedbUri)) return opening;
  const deadline = { deadlineMs: config.s3DeadlineMs, where: objectStoreName(config.lancedbUri, storageOptions), setting: 'MEMFOLD_S3_DEADLINE_MS' };
  // An archive that opens after the deadline is closed again: the caller has already been told it failed.
  const archive = await withinDeadline(opening, 'the archive to open', deadline, (late) => void late.close().catch(() => undefined));
  return withReadDeadline(archive, deadline);
}

/** The object store as errors name it: its endpoint's origin and the bucket, never a credential. */
function objectStoreName(uri: string, storageOptions: Record<string, string> | undefined): string {
  const bucket = /^[a-z][a-z0-9+.-]*:\/\/([^/]*)/i.exec(uri)?.[1] ?? '';
  const endpoint = storageOptions?.aws_endpoint;
  return endpoint ? `the S3 endpoint ${new URL(endpoint).origin} (bucket ${bucket})` : `the object store of ${uri.split('?')[0]}`;
}

/** The check that `persistence` belongs to the configured archive (`archive-binding.ts`), recording it on a first open that may write. */
export function archiveBindingCheck(config: RuntimeConfig, persistence: PersistenceProvider, options: { write: boolean; adopt: boolean }): () => Promise<void> {
  return () =>
    checkArchiveBinding({
      persistence,
      location: archiveLocation(config),
      identity: (assign) => archiveIdentityOf(config, assign),
      ...options,
    });
}

/**
 * `openArchive` with `check` (the live store's record of its archive) run around it: a folder is checked before it
 * opens, so a process that brings another archive is refused before it creates or writes one; an object store after,
 * so its own checks (endpoint, credentials, conditional writes) report first. A failed check closes what opened.
 */
export async function openCheckedArchive(
  config: RuntimeConfig,
  embedder: Embedder,
  onWarning: (message: string, error: unknown) => void,
  check: () => Promise<void>,
  options: { readOnly?: boolean } = {},
): Promise<Archive> {
  const folder = isFolder(config.lancedbUri);
  if (folder) await check();
  const archive = await openArchive(config, embedder, onWarning, options);
  if (!folder) {
    try {
      await check();
    } catch (error) {
      await archive.close().catch(() => undefined);
      throw error;
    }
  }
  return archive;
}

/** Where a folder archive keeps its identity: a LanceDB table folder, looked for without loading LanceDB. */
const IDENTITY_MARKER = `${ARCHIVE_IDENTITY_TABLE}.lance`;

/**
 * `openCheckedArchive` for `createMemfold`, deferred to the archive's first call when what can be checked without
 * LanceDB holds: a folder archive at the location the live store recorded, holding an identity. The check of that
 * identity then runs on the first call, before it reads or writes, and fails it with `archive_mismatch` (a replaced
 * folder holding another archive). Any other case (no record yet, another location, a folder without its identity,
 * an object store, adopting) is checked now, as before.
 */
export async function openBoundArchive(
  config: RuntimeConfig,
  embedder: Embedder,
  onWarning: (message: string, error: unknown) => void,
  persistence: PersistenceProvider,
  options: { write: boolean; adopt: boolean },
): Promise<Archive> {
  const check = archiveBindingCheck(config, persistence, options);
  const open = () => openCheckedArchive(config, embedder, onWarning, check);
  if (!isFolder(config.lancedbUri) || options.adopt || persistence.getArchiveBinding === undefined) return open();
  const bound = await persistence.getArchiveBinding();
  const deferrable = bound?.location === archiveLocation(config) && existsSync(path.join(config.lancedbUri, IDENTITY_MARKER));
  return deferrable ? openOnFirstUse(open) : open();
}
