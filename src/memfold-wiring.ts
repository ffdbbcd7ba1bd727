/**
 * What `createMemfold` (`memfold.ts`) sets up before it opens anything: the queue of model calls and its rate limit,
 * the events it emits, and the notes memory_read adds when vector search failed.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RuntimeConfig } from './config.js';
import { remoteCallQueue } from './configured-adapters.js';
import type { Embedder } from './embedding/embedder.js';
import { failureReason, MemfoldError } from './errors.js';
import type { MemfoldEvent, MemfoldOptions } from './memfold-options.js';
import type { ModelQueue } from './openai/openai-queue.js';
import type { PersistenceProvider } from './persistence/persistence-provider.js';

/**
 * Whether the live store is a PostgreSQL database that other memfold processes may share, so the model rate limit
 * is kept there: the configured database (not PGlite, which one process owns, nor the memory store), or a
 * PostgreSQL store passed in that can reserve slots.
 */
function sharesRateLimit(options: MemfoldOptions, config: RuntimeConfig): boolean {
  if (options.persistence) return options.persistence.backend === 'postgres' && typeof options.persistence.reserveRateSlot === 'function';
  return options.store !== 'memory' && config.databaseUrl !== undefined;
}

function storeNotOpen(): MemfoldError {
  return new MemfoldError('persistence_error', 'the live store is not open yet, so no rate-limit slot can be reserved');
}

export interface MemfoldQueue {
  queue: ModelQueue;
  /** Hands the queue the live store once it is open, where a shared rate limit reserves its slots. */
  bind(persistence: PersistenceProvider): void;
}

/**
 * The queue every model call goes through. With PostgreSQL the model rate limit is shared by every process on the
 * database: its slots are reserved there, through the store opened later (requests only start after opening).
 */
export function memfoldQueue({ options, config }: { options: MemfoldOptions; config: RuntimeConfig }): MemfoldQueue {
  let reserveRateSlot: PersistenceProvider['reserveRateSlot'];
  const sharedRateLimit = config.modelRequestsPerMinute !== undefined && sharesRateLimit(options, config);
  const queue = remoteCallQueue(
    config,
    sharedRateLimit ? (key, intervalMs) => (reserveRateSlot ? reserveRateSlot(key, intervalMs) : Promise.reject(storeNotOpen())) : undefined,
  );
  return {
    queue,
    bind(persistence) {
      if (sharedRateLimit) reserveRateSlot = persistence.reserveRateSlot?.bind(persistence);
    },
  };
}

export interface MemfoldEvents {
  emit(event: MemfoldEvent): void;
  /** The context's tokens after each conversation's last compaction in this process (the compact tool's refusal). */
  tokensAfterCompaction: Map<string, number>;
}

/** The events memfold emits, passed on to `onEvent` once they are noted. */
export function memfoldEvents({ onEvent }: Pick<MemfoldOptions, 'onEvent'>): MemfoldEvents {
  const tokensAfterCompaction = new Map<string, number>();
  const emit = (event: MemfoldEvent) => {
    if (event.type === 'compaction_ended' && event.status === 'compacted') tokensAfterCompaction.set(event.conversationId, event.tokensAfter);
    onEvent?.(event);
  };
  return { emit, tokensAfterCompaction };
}

export interface VectorNotes {
  /** Reasons vector search was unavailable, collected per memory_read call (see `memfold-tools.ts`). */
  notes: AsyncLocalStorage<Set<string>>;
  /** The archive's `onWarning`. */
  onArchiveWarning(message: string, error: unknown): void;
}

/** The archive's warnings: a failed embedder is noted for the memory_read call it happened in, and emitted. */
export function vectorNotes({ embedder, emit }: { embedder: Embedder | undefined; emit: (event: MemfoldEvent) => void }): VectorNotes {
  const notes = new AsyncLocalStorage<Set<string>>();
  const onArchiveWarning = (message: string, error: unknown): void => {
    if (MemfoldError.isInstance(error) && error.code === 'embedding_error') {
      notes.getStore()?.add(`${embedder?.id ?? 'embedder'}: ${failureReason(error)}`);
      emit({ type: 'warning', code: 'vector_search_unavailable', message });
    } else {
      emit({ type: 'warning', code: 'archive_warning', message });
    }
  };
  return { notes, onArchiveWarning };
}
