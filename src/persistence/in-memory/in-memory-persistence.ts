/**
 * The PersistenceProvider adapter on plain maps: the Kysely store's contract without a database, for
 * `createMemfold({ store: 'memory' })` and fast tests. Nothing is written anywhere; the data lives in
 * an `InMemoryPersistenceState` (a fresh one unless given) and is gone when nothing holds it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DEFAULT_MAX_MESSAGE_BYTES, validateMaxMessageBytes } from '../message-size-limit.js';
import { MemfoldError } from '../../errors.js';
import { MAX_NAMESPACE_BYTES, requireKey, requireText } from '../../conversation/text.js';
import type { LiveCounts, PersistenceProvider, PersistenceTransaction } from '../persistence-provider.js';
import { startLockWait, type LockWaitOptions } from '../lock-wait.js';
import type { InMemoryContext, InMemoryMessageOperations } from './in-memory-messages.js';
import { conversationKey, copyOf, createInMemoryPersistenceState, type InMemoryPersistenceState, type InMemoryTables } from './in-memory-tables.js';

export interface InMemoryPersistenceOptions {
  /** Scope of the conversations this store sees. Default `'default'`. */
  namespace?: string;
  /** Source of "now" for createdAt defaults and bookkeeping times. Default `() => new Date()`. */
  clock?: () => Date;
  /** UTF-8 bytes one appended message may take; larger ones are refused. Default 10 MiB (`DEFAULT_MAX_MESSAGE_BYTES`). */
  maxMessageBytes?: number;
  /**
   * The data to use. Default: a fresh, empty state of this store alone. Pass one state to several stores
   * to share it as one database (other namespaces, or a store opened again after `close()`).
   */
  state?: InMemoryPersistenceState;
}

type Operations = typeof import('./in-memory-operations.js');
let loaded: Operations | undefined;

/** The store's operations (`in-memory-operations.ts`), loaded by the first call of any in-memory store. */
async function operations(): Promise<Operations> {
  loaded ??= await import('./in-memory-operations.js');
  return loaded;
}

/** Open a store on plain maps. */
export function createInMemoryPersistence(options: InMemoryPersistenceOptions = {}): PersistenceProvider {
  const context: InMemoryContext = {
    namespace: requireKey(options.namespace ?? 'default', 'namespace', MAX_NAMESPACE_BYTES),
    clock: options.clock ?? (() => new Date()),
    maxMessageBytes: validateMaxMessageBytes(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, 'maxMessageBytes'),
  };
  const state = options.state ?? createInMemoryPersistenceState();
  const { namespace, clock } = context;
  let made: InMemoryMessageOperations | undefined;
  const messagesOf = (ops: Operations) => {
    made ??= ops.createInMemoryMessages(() => state.tables, context);
    return made;
  };
  // Marks the async context of a running transaction() callback (see ready()).
  const inTransaction = new AsyncLocalStorage<{ active: boolean }>();
  let closed = false;

  /** Writes wait for a running transaction; a store call from inside one would wait for itself forever. */
  function ready(method: string): void {
    if (closed) throw new MemfoldError('persistence_error', `Cannot ${method}: the store is closed`);
    if (inTransaction.getStore()?.active) {
      throw new MemfoldError(
        'persistence_error',
        `Cannot call ${method} on the store inside transaction(): use the tx argument (the in-memory store runs one transaction at a time, so this would deadlock)`,
      );
    }
  }
  // Once the operations are loaded, a read runs at once and a write is queued at once, as they always did.
  const read: Access = async (method, fn) => {
    ready(method);
    return fn(loaded ?? (await operations()));
  };
  const write: Access = async (method, fn) => {
    ready(method);
    return state.serialize(async () => fn(loaded ?? (await operations())));
  };

  return {
    backend: 'memory',

    async migrate() {
      ready('migrate');
      // Plain maps have no schema to bring up to date.
      return { applied: [], current: [] };
    },

    append: (conversationId, batch) => write('append', (ops) => messagesOf(ops).append(conversationId, batch)),
    deleteByIds: (conversationId, ids) => write('deleteByIds', (ops) => messagesOf(ops).deleteByIds(conversationId, ids)),
    commitCompaction: (commit) => write('commitCompaction', (ops) => messagesOf(ops).commitCompaction(commit)),
    commitClearing: (commit) => write('commitClearing', (ops) => messagesOf(ops).commitClearing(commit)),
    loadHistory: (conversationId, options) => read('loadHistory', (ops) => messagesOf(ops).loadHistory(conversationId, options)),
    countLive: (conversationId, ids, options) => read('countLive', (ops) => messagesOf(ops).countLive(conversationId, ids, options)),
    countLiveAndCleared: (conversationId, ids) => read('countLiveAndCleared', (ops) => liveAndCleared(messagesOf(ops), conversationId, ids)),
    setPinned: (conversationId, ids, pinned) => write('setPinned', (ops) => messagesOf(ops).setPinned(conversationId, ids, pinned)),
    findUsedIds: (conversationId, ids) => read('findUsedIds', (ops) => messagesOf(ops).findUsedIds(conversationId, ids)),

    async transaction<T>(fn: (tx: PersistenceTransaction) => Promise<T>): Promise<T> {
      ready('transaction');
      return runTransaction({ state, context, inTransaction, fn });
    },

    async withConversationLock<T>(conversationId: string, fn: () => Promise<T>, lockOptions: LockWaitOptions = {}) {
      ready('withConversationLock');
      requireText(conversationId, 'conversationId');
      return withLock({ state, key: conversationKey(namespace, conversationId), conversationId, fn, lockOptions });
    },

    recordOperation: (operation) => write('recordOperation', (ops) => ops.recordOperation(state.tables, namespace, operation, clock().toISOString())),
    updateOperation: (update) => write('updateOperation', (ops) => ops.updateOperation(state.tables, namespace, update, clock().toISOString())),
    listOperations: (conversationId) =>
      read('listOperations', (ops) => {
        requireText(conversationId, 'conversationId');
        return ops.listOperations(state.tables, namespace, (operation) => operation.conversationId === conversationId);
      }),
    listPendingOperations: (conversationId) =>
      read('listPendingOperations', (ops) => {
        if (conversationId !== undefined) requireText(conversationId, 'conversationId');
        return ops.listOperations(
          state.tables,
          namespace,
          (operation) =>
            (operation.status === 'planned' || operation.status === 'archived') &&
            (conversationId === undefined || operation.conversationId === conversationId),
        );
      }),
    listConversations: () => read('listConversations', (ops) => ops.listConversations(state.tables, namespace)),
    eraseConversation: (conversationId, options) =>
      write('eraseConversation', (ops) => ops.eraseConversation(state.tables, namespace, conversationId, options)),
    ...conversationRecords({ state, namespace, clock, read, write }),

    async close() {
      closed = true;
    },
  };
}

type Access = <T>(method: string, fn: (ops: Operations) => T) => Promise<T>;

/** The records a conversation keeps beside its messages: the loop guard, the token calibration, its stored settings. */
function conversationRecords(input: {
  state: InMemoryPersistenceState;
  namespace: string;
  clock: () => Date;
  read: Access;
  write: Access;
}): Pick<
  PersistenceProvider,
  | 'getLoopGuardState'
  | 'setLoopGuardState'
  | 'clearLoopGuardState'
  | 'getTokenCalibration'
  | 'setTokenCalibration'
  | 'getConversationSettings'
  | 'setConversationSettings'
  | 'clearConversationSettings'
> {
  const { state, namespace, clock, read, write } = input;
  return {
    getLoopGuardState: (conversationId) => read('getLoopGuardState', (ops) => ops.getLoopGuardState(state.tables, namespace, conversationId)),
    setLoopGuardState: (conversationId, update) =>
      write('setLoopGuardState', (ops) => ops.setLoopGuardState(state.tables, namespace, conversationId, update, clock().toISOString())),
    clearLoopGuardState: (conversationId) => write('clearLoopGuardState', (ops) => ops.clearLoopGuardState(state.tables, namespace, conversationId)),
    getTokenCalibration: (conversationId) => read('getTokenCalibration', (ops) => ops.getTokenCalibration(state.tables, namespace, conversationId)),
    setTokenCalibration: (conversationId, update) =>
      write('setTokenCalibration', (ops) => ops.setTokenCalibration(state.tables, namespace, conversationId, update, clock().toISOString())),
    getConversationSettings: (conversationId) => read('getConversationSettings', (ops) => ops.getConversationSettings(state.tables, namespace, conversationId)),
    setConversationSettings: (conversationId, settings) =>
      write('setConversationSettings', (ops) => ops.setConversationSettings(state.tables, namespace, conversationId, settings, clock().toISOString())),
    clearConversationSettings: (conversationId) =>
      write('clearConversationSettings', (ops) => ops.clearConversationSettings(state.tables, namespace, conversationId)),
  };
}

/** Copy-on-write: `fn` works on a snapshot, which replaces the tables only when `fn` succeeds. */
async function runTransaction<T>(input: {
  state: InMemoryPersistenceState;
  context: InMemoryContext;
  inTransaction: AsyncLocalStorage<{ active: boolean }>;
  fn: (tx: PersistenceTransaction) => Promise<T>;
}): Promise<T> {
  const { state, context, inTransaction, fn } = input;
  return state.serialize(async () => {
    const draft: InMemoryTables = copyOf(state.tables);
    const marker = { active: true };
    try {
      const ops = await operations();
      const value = await inTransaction.run(marker, () => fn(promised(ops.createInMemoryMessages(() => draft, context))));
      state.tables = draft;
      return value;
    } finally {
      marker.active = false;
    }
  });
}

/** `fn` under the conversation's lock, taken at once or, with `wait`, waited for within the options' bounds. */
async function withLock<T>(input: {
  state: InMemoryPersistenceState;
  key: string;
  conversationId: string;
  fn: () => Promise<T>;
  lockOptions: LockWaitOptions;
}): Promise<{ acquired: false } | { acquired: true; value: T }> {
  const { state, key, conversationId, fn, lockOptions } = input;
  const wait = startLockWait(conversationId, lockOptions);
  try {
    if (!(lockOptions.wait ?? false)) {
      if (!state.locks.tryAcquire(key, lockOptions.purpose)) return { acquired: false as const };
    } else if (!(await state.locks.acquire(key, { signal: wait.signal, ...(lockOptions.purpose !== undefined ? { holder: lockOptions.purpose } : {}) }))) {
      throw wait.giveUp(state.locks.holderOf(key));
    }
  } finally {
    wait.dispose();
  }
  try {
    return { acquired: true as const, value: await fn() };
  } finally {
    state.locks.release(key);
  }
}

/** `countLive`'s two counts: in memory there is no statement to save. */
function liveAndCleared(operations: InMemoryMessageOperations, conversationId: string, ids: string[]): LiveCounts {
  return { live: operations.countLive(conversationId, ids), cleared: operations.countLive(conversationId, ids, { clearedOnly: true }) };
}

/** The synchronous operations as the port's PersistenceTransaction. */
function promised(operations: InMemoryMessageOperations): PersistenceTransaction {
  return {
    append: async (conversationId, batch) => operations.append(conversationId, batch),
    deleteByIds: async (conversationId, ids) => operations.deleteByIds(conversationId, ids),
    loadHistory: async (conversationId, options) => operations.loadHistory(conversationId, options),
    countLive: async (conversationId, ids, options) => operations.countLive(conversationId, ids, options),
    countLiveAndCleared: async (conversationId, ids) => liveAndCleared(operations, conversationId, ids),
    setPinned: async (conversationId, ids, pinned) => operations.setPinned(conversationId, ids, pinned),
    commitCompaction: async (commit) => operations.commitCompaction(commit),
    commitClearing: async (commit) => operations.commitClearing(commit),
    findUsedIds: async (conversationId, ids) => operations.findUsedIds(conversationId, ids),
  };
}
