/**
 * The in-memory store's data: plain maps that stand for the Kysely store's tables. Several stores may
 * share one `InMemoryPersistenceState` (other namespaces, or a store reopened after close); its write
 * queue and conversation locks are shared with the data, as a database's are.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import { createKeyedMutex } from '../keyed-mutex.js';
import type { CompactionOperation, ConversationSettingsRecord, LoopGuardState, TokenCalibration } from '../persistence-provider.js';

/** A row of `conversations` plus its messages and id ledger. */
export interface ConversationRecord {
  namespace: string;
  id: string;
  createdAt: string;
  updatedAt: string;
  /** Greater than every ordinary seq the conversation ever had: seqs are never reused. */
  nextSeq: number;
  /** Rows by seq, the clip-archive (seq 0) first when there is one; overlay rows carry `compactedBy`. */
  messages: ConversationMessage[];
  /** Every id the conversation ever accepted, with its message digest (`message_ids`). */
  usedIds: Map<string, string>;
  /** The loop guard's record (`compaction_pauses`); absent when the conversation has no streak. */
  loopGuard?: LoopGuardState;
  /** The token calibration (`token_calibrations`); absent when none was observed since the last commit. */
  calibration?: TokenCalibration;
}

export interface OperationRecord {
  namespace: string;
  /** Insertion order, breaking ties between operations created in the same millisecond. */
  order: number;
  operation: CompactionOperation;
}

export interface InMemoryTables {
  /** By `conversationKey(namespace, id)`. */
  conversations: Map<string, ConversationRecord>;
  /** By operation id: unique across namespaces, as the SQL table's primary key. */
  operations: Map<string, OperationRecord>;
  nextOperationOrder: number;
  /** Each conversation's settings overrides (`conversation_settings`), by `conversationKey`: no conversation row needed. */
  settings: Map<string, ConversationSettingsRecord>;
}

/** Data, write queue and locks of one in-memory database. Create with `createInMemoryPersistenceState()`. */
export interface InMemoryPersistenceState {
  /** Replaced as a whole when a transaction commits (its copy-on-write snapshot). */
  tables: InMemoryTables;
  /** Runs writes one at a time, so a committing transaction never overwrites a write made meanwhile. */
  serialize<T>(task: () => Promise<T>): Promise<T>;
  /** The conversation locks, keyed by `conversationKey`. */
  locks: ReturnType<typeof createKeyedMutex>;
}

export function createInMemoryPersistenceState(): InMemoryPersistenceState {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    tables: { conversations: new Map(), operations: new Map(), nextOperationOrder: 0, settings: new Map() },
    serialize<T>(task: () => Promise<T>): Promise<T> {
      const run = tail.then(task);
      tail = run.catch(() => undefined);
      return run;
    },
    locks: createKeyedMutex(),
  };
}

/** Unambiguous for any namespace and conversation id. */
export function conversationKey(namespace: string, conversationId: string): string {
  return JSON.stringify([namespace, conversationId]);
}

/** A deep copy: a transaction's snapshot, and what callers get (so they cannot change stored rows). */
export function copyOf<T>(value: T): T {
  return structuredClone(value);
}
