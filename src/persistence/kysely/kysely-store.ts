/**
 * The PersistenceProvider adapter: one Kysely store for PostgreSQL (pg) and embedded PGlite.
 * Opening runs the migrations (or, with `migrate: false`, only checks them); every query is scoped to
 * the store's namespace.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Kysely } from 'kysely';
import { DEFAULT_MAX_MESSAGE_BYTES, validateMaxMessageBytes } from '../message-size-limit.js';
import { MemfoldError } from '../../errors.js';
import { requireMigrated, runMigrations } from './kysely-migrations.js';
import type { PersistenceProvider, PersistenceTransaction } from '../persistence-provider.js';
import { guard, toPersistenceError } from '../persistence-error.js';
import { createPgliteDialect } from '../pglite/pglite-dialect.js';
import { createPostgresDialect } from '../postgres/postgres-dialect.js';
import type { StoreDialect } from './store-dialect.js';
import { createKeyedMutex } from '../keyed-mutex.js';
import { createSemaphore, type Semaphore } from '../../semaphore.js';
import { advisoryLockKey, withAdvisoryLock, type HeldLock, type LockResult } from './kysely-conversation-lock.js';
import { startLockWait, type LockWaitOptions } from '../lock-wait.js';
import { clearLoopGuardState, getLoopGuardState, setLoopGuardState } from './kysely-loop-guard.js';
import { kyselyMessageOperations } from './kysely-messages.js';
import { getTokenCalibration, setTokenCalibration } from './kysely-token-calibration.js';
import { clearConversationSettings, getConversationSettings, setConversationSettings } from './kysely-conversation-settings.js';
import { reserveRateSlot } from './kysely-rate-slots.js';
import { bindArchive, getArchiveBinding } from './kysely-archive-binding.js';
import type { StoreContext } from './kysely-store-context.js';
import { eraseConversation } from './kysely-erase.js';
import { listConversations, listOperations, listPendingOperations, recordOperation, updateOperation } from './kysely-operation-log.js';
import { MAX_NAMESPACE_BYTES, requireKey, requireText } from '../../conversation/text.js';
import { DEFAULT_DATABASE_SCHEMA, requireDatabaseSchema } from '../database-schema.js';
import type { Database } from './kysely-schema.js';

interface CommonOptions {
  /** Scope of the conversations this store sees. Default `'default'`. */
  namespace?: string;
  /** Source of "now" for createdAt defaults and bookkeeping times. Default `() => new Date()`. */
  clock?: () => Date;
  /** UTF-8 bytes one appended message may take; larger ones are refused. Default 10 MiB (`DEFAULT_MAX_MESSAGE_BYTES`). */
  maxMessageBytes?: number;
  /**
   * Apply pending migrations while opening. Default true. With false the store writes no schema: it
   * checks that every migration is recorded and otherwise refuses to open (`persistence_error`, saying
   * the database is not initialized or how far behind it is), for readers that must not create tables.
   */
  migrate?: boolean;
  /**
   * The schema holding memfold's tables: every connection resolves names there alone, so an application's own
   * same-named tables (in `public` or elsewhere) are never touched. Default `memfold`; created on the first migration;
   * a store made before it had one is moved there from `public` (migration 011). A lowercase SQL identifier.
   */
  schema?: string;
}

export type KyselyPersistenceOptions =
  | ({ dialect: 'postgres'; databaseUrl: string } & CommonOptions)
  | ({ dialect: 'pglite'; dataDir: string } & CommonOptions);

/** Open the store (PostgreSQL at `databaseUrl`, or PGlite in `dataDir`) and apply pending migrations. */
export async function createKyselyPersistence(options: KyselyPersistenceOptions): Promise<PersistenceProvider> {
  return (await openKyselyStore(options)).persistence;
}

/**
 * Like createKyselyPersistence, and also hands back the store's own Kysely handle, for tools and
 * tests that need raw SQL (on PGlite, the only way in: its one connection belongs to the store).
 * Never use `db` inside `transaction()` on PGlite. `persistence.close()` also closes `db`.
 */
export async function openKyselyStore(options: KyselyPersistenceOptions): Promise<{ persistence: PersistenceProvider; db: Kysely<Database> }> {
  const namespace = requireKey(options.namespace ?? 'default', 'namespace', MAX_NAMESPACE_BYTES);
  const maxMessageBytes = validateMaxMessageBytes(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, 'maxMessageBytes');
  const schema = requireDatabaseSchema(options.schema ?? DEFAULT_DATABASE_SCHEMA, 'schema');
  const backend =
    options.dialect === 'postgres' ? await createPostgresDialect(options.databaseUrl, { schema }) : await createPgliteDialect(options.dataDir, { schema });
  const db = new Kysely<Database>({ dialect: backend.dialect });
  const persistence = createStore(db, backend, { namespace, clock: options.clock ?? (() => new Date()), maxMessageBytes }, schema);
  try {
    if (options.migrate ?? true) await persistence.migrate();
    else await requireMigrated(db, { schema });
  } catch (error) {
    await persistence.close().catch(() => {});
    throw toPersistenceError(error, `open the ${backend.backend} store`);
  }
  return { persistence, db };
}

function createStore(db: Kysely<Database>, backend: StoreDialect, options: Omit<StoreContext, 'heldLock'>, schema: string): PersistenceProvider {
  // The conversation locks the running async context holds (PostgreSQL), by conversation id.
  const heldLocks = new AsyncLocalStorage<ReadonlyMap<string, HeldLock>>();
  const context: StoreContext = { ...options, heldLock: (conversationId) => heldLocks.getStore()?.get(conversationId) };
  const operations = kyselyMessageOperations(db, context);
  const mutex = createKeyedMutex();
  // Each held advisory lock keeps a pooled connection; leave two for the work done under the locks.
  const lockSlots = createSemaphore(Math.max(1, (backend.poolSize ?? 3) - 2));
  // Marks the async context of a running transaction() callback (see assertOutsideTransaction).
  const inTransaction = new AsyncLocalStorage<{ active: boolean }>();
  let closed: Promise<void> | undefined;

  /** With one pooled connection, a store call from inside transaction() would wait on itself forever. */
  function assertOutsideTransaction(method: string): void {
    if (closed !== undefined) throw new MemfoldError('persistence_error', `Cannot ${method}: the store is closed`);
    if (backend.singleConnection && inTransaction.getStore()?.active) {
      throw new MemfoldError(
        'persistence_error',
        `Cannot call ${method} on the store inside transaction(): use the tx argument (PGlite has one connection, so this would deadlock)`,
      );
    }
  }

  /** `fn` as a store method: refused (as a rejected promise) when the store is closed or inside transaction(). */
  function outside<A extends unknown[], R>(method: string, fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return async (...args) => {
      assertOutsideTransaction(method);
      return fn(...args);
    };
  }

  return {
    backend: backend.backend,

    migrate: outside('migrate', () => runMigrations(db, { schema })),

    append: outside('append', operations.append),
    deleteByIds: outside('deleteByIds', operations.deleteByIds),
    loadHistory: outside('loadHistory', operations.loadHistory),
    countLive: outside('countLive', operations.countLive),
    countLiveAndCleared: outside('countLiveAndCleared', operations.countLiveAndCleared),
    setPinned: outside('setPinned', operations.setPinned),
    findUsedIds: outside('findUsedIds', operations.findUsedIds),
    commitCompaction: outside('commitCompaction', operations.commitCompaction),
    commitClearing: outside('commitClearing', operations.commitClearing),

    async transaction<T>(fn: (tx: PersistenceTransaction) => Promise<T>): Promise<T> {
      assertOutsideTransaction('transaction');
      return runTransaction({ db, context, inTransaction, fn });
    },

    async withConversationLock<T>(conversationId: string, fn: () => Promise<T>, options: LockWaitOptions = {}): Promise<LockResult<T>> {
      assertOutsideTransaction('withConversationLock');
      requireText(conversationId, 'conversationId');
      return withLock({ backend, mutex, lockSlots, heldLocks, context, conversationId, fn, options });
    },

    recordOperation: outside('recordOperation', (operation) => recordOperation(db, context, operation)),
    updateOperation: outside('updateOperation', (update) => updateOperation(db, context, update)),
    listOperations: outside('listOperations', (conversationId) => listOperations(db, context, conversationId)),
    listPendingOperations: outside('listPendingOperations', (conversationId) => listPendingOperations(db, context, conversationId)),
    listConversations: outside('listConversations', () => listConversations(db, context)),
    eraseConversation: outside('eraseConversation', (conversationId, options) => eraseConversation(db, context, conversationId, options)),
    getLoopGuardState: outside('getLoopGuardState', (conversationId) => getLoopGuardState(db, context, conversationId)),
    setLoopGuardState: outside('setLoopGuardState', (conversationId, update) => setLoopGuardState(db, context, conversationId, update)),
    clearLoopGuardState: outside('clearLoopGuardState', (conversationId) => clearLoopGuardState(db, context, conversationId)),
    getTokenCalibration: outside('getTokenCalibration', (conversationId) => getTokenCalibration(db, context, conversationId)),
    setTokenCalibration: outside('setTokenCalibration', (conversationId, update) => setTokenCalibration(db, context, conversationId, update)),
    getConversationSettings: outside('getConversationSettings', (conversationId) => getConversationSettings(db, context, conversationId)),
    setConversationSettings: outside('setConversationSettings', (conversationId, settings) => setConversationSettings(db, context, conversationId, settings)),
    clearConversationSettings: outside('clearConversationSettings', (conversationId) => clearConversationSettings(db, context, conversationId)),
    reserveRateSlot: outside('reserveRateSlot', (key, intervalMs) => reserveRateSlot(db, key, intervalMs)),
    getArchiveBinding: outside('getArchiveBinding', () => getArchiveBinding(db)),
    bindArchive: outside('bindArchive', (decide) => bindArchive(db, decide)),

    close() {
      closed ??= (async () => {
        try {
          await db.destroy();
        } finally {
          await backend.close();
        }
      })();
      return closed;
    },
  };
}

/** `fn` in a database transaction, on the operations over it; the caller's own error comes back as thrown. */
async function runTransaction<T>(input: {
  db: Kysely<Database>;
  context: StoreContext;
  inTransaction: AsyncLocalStorage<{ active: boolean }>;
  fn: (tx: PersistenceTransaction) => Promise<T>;
}): Promise<T> {
  const { db, context, inTransaction, fn } = input;
  const marker = { active: true };
  let fnFailed: { error: unknown } | undefined;
  try {
    return await db.transaction().execute((trx) =>
      inTransaction.run(marker, async () => {
        try {
          return await fn(kyselyMessageOperations(trx, context));
        } catch (error) {
          fnFailed = { error };
          throw error;
        }
      }),
    );
  } catch (error) {
    // The caller's own error comes back as thrown (also when the ROLLBACK after it failed too, on a lost
    // connection); a failing BEGIN/COMMIT becomes a persistence error.
    throw fnFailed ? fnFailed.error : toPersistenceError(error, 'run a transaction');
  } finally {
    marker.active = false;
  }
}

/**
 * `fn` under the conversation's lock: the in-process mutex, then (PostgreSQL) an advisory lock on a reserved session,
 * which `fn`'s commits re-check. Taken at once, or with `wait` waited for within the options' bounds.
 */
async function withLock<T>(input: {
  backend: StoreDialect;
  mutex: ReturnType<typeof createKeyedMutex>;
  lockSlots: Semaphore;
  heldLocks: AsyncLocalStorage<ReadonlyMap<string, HeldLock>>;
  context: StoreContext;
  conversationId: string;
  fn: () => Promise<T>;
  options: LockWaitOptions;
}): Promise<LockResult<T>> {
  const { backend, mutex, lockSlots, heldLocks, context, conversationId, fn, options } = input;
  const key = advisoryLockKey(context.namespace, conversationId);
  const waiting = options.wait ?? false;
  const wait = startLockWait(conversationId, options);
  try {
    if (!waiting) {
      if (!mutex.tryAcquire(key, options.purpose)) return { acquired: false };
    } else if (!(await mutex.acquire(key, { signal: wait.signal, ...(options.purpose !== undefined ? { holder: options.purpose } : {}) }))) {
      const inProcess = mutex.holderOf(key);
      throw wait.giveUp(inProcess === undefined ? undefined : `${inProcess} in this process`);
    }
    try {
      if (!backend.advisoryLocks || !backend.reserveSession) {
        wait.dispose();
        return { acquired: true, value: await fn() };
      }
      // Even a caller that does not wait for the lock waits (bounded) for a connection to hold it on.
      if (!(await lockSlots.acquire(wait.signal))) throw wait.giveUp('other conversations locked by this process (every connection for locks was in use)');
      try {
        const session = await guard('take a conversation lock', backend.reserveSession);
        const advisoryWait = waiting ? { wait: true as const, signal: wait.signal, remainingMs: wait.remainingMs } : { wait: false as const };
        // fn runs knowing the lock it holds, so its commits can check that the lock is still there.
        const locked = await withAdvisoryLock(session, { conversationId, key, wait: advisoryWait }, (held) => {
          wait.dispose();
          return heldLocks.run(new Map([...(heldLocks.getStore() ?? []), [conversationId, held]]), fn);
        });
        if (locked.acquired || !waiting) return locked.acquired ? locked : { acquired: false };
        throw wait.giveUp('holder' in locked ? locked.holder : undefined);
      } finally {
        lockSlots.release();
      }
    } finally {
      mutex.release(key);
    }
  } finally {
    wait.dispose();
  }
}
