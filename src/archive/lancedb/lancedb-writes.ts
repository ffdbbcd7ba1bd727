/**
 * Write discipline for one LanceDB table: writes are serialized per table within the process (a promise chain),
 * and a commit conflict (another process, or maintenance, committed first) is retried a few times with backoff.
 */

/** LanceDB reports optimistic-concurrency losses as "Retryable commit conflict ... Please retry." */
export function isCommitConflict(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /commit conflict|please retry|retryable/i.test(message);
}

export interface ConflictRetryOptions {
  /** Retries after the first attempt. */
  retries: number;
  /** Delay before retry n (0-based) is baseDelayMs * 2^n. */
  baseDelayMs: number;
  sleep: (ms: number) => Promise<void>;
}

/** Run `operation`, retrying only commit conflicts. Operations passed here must be idempotent (upsert, update, delete, optimize). */
export async function withConflictRetry<T>(operation: () => Promise<T>, options: ConflictRetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= options.retries || !isCommitConflict(error)) throw error;
      await options.sleep(options.baseDelayMs * 2 ** attempt);
    }
  }
}

/** Tail of the write chain per table (keyed by uri and table name), shared by every archive opened in this process. */
const chains = new Map<string, Promise<unknown>>();

/**
 * Run `task` after every task queued before it for the same table. A failed task does not stop the chain.
 */
export function enqueueWrite<T>(tableKey: string, task: () => Promise<T>): Promise<T> {
  const previous = chains.get(tableKey) ?? Promise.resolve();
  const result = previous.then(task);
  const tail = result.catch(() => undefined);
  chains.set(tableKey, tail);
  // Forget the chain once it is idle, so the map does not grow with every table ever opened.
  void tail.then(() => {
    if (chains.get(tableKey) === tail) chains.delete(tableKey);
  });
  return result;
}

/** Resolves when every write queued so far for this table has settled. */
export function writesSettled(tableKey: string): Promise<void> {
  return (chains.get(tableKey) ?? Promise.resolve()).then(() => undefined);
}
