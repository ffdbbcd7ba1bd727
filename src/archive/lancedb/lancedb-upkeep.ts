/**
 * Index upkeep after a write. Creating the indexes (the first rows) is awaited: full-text search needs its index.
 * Later upkeep (optimize) is queued behind the writes instead, once they pause for `delayMs`: its cost grows with the
 * whole table, all conversations together, and a compaction should not wait for it between its own writes; rows stay
 * searchable meanwhile. One pending upkeep at a time is enough; `close()` queues one still pending and waits for it.
 */
import { errorMessage } from '../../errors.js';
import { ARCHIVE_INDEXES, FULL_TEXT_INDEXES, maintainIndexes } from './lancedb-indexes.js';
import { enqueueWrite } from './lancedb-writes.js';
import type { Table } from '@lancedb/lancedb';

export interface UpkeepInput {
  table: Table;
  /** The table's write queue (`lancedb-writes.ts`). */
  tableKey: string;
  delayMs: number;
  optimizeAfterUnindexedRows: number;
  scalarIndexes: boolean;
  retry: <T>(operation: () => Promise<T>) => Promise<T>;
  warn: (message: string, error: unknown) => void;
  /** True once the archive started closing: upkeep then is the next open's. */
  closing: () => boolean;
}

export interface Upkeep {
  /** Index upkeep, or keep it waiting until the writes pause. */
  afterWrite(): Promise<void>;
  /**
   * A write is starting: a pending upkeep waits for it to end. Its embedding runs before it reaches the table's queue
   * and may take seconds, which would otherwise look like a pause, and an upkeep started then would hold the write
   * (measured: a 5 s optimize inside one compaction of 100k messages). The 10-delay bound still holds. True when one
   * was held.
   */
  hold(): boolean;
  /** Whether an upkeep waits for the writes to pause. */
  pending(): boolean;
  /** Queue the pending upkeep now (closing). */
  flush(): void;
  /** The first upkeep on open: creating the indexes the table lacks, in the write queue. */
  maintain(): Promise<void>;
}

export function createUpkeep(input: UpkeepInput): Upkeep {
  const { table, tableKey, delayMs, retry, warn } = input;
  /** True once every index exists: from then on upkeep only optimizes, and may run behind the writes. */
  let indexesReady = false;
  const maintain = async (): Promise<void> => {
    try {
      const outcome = await maintainIndexes(table, input.optimizeAfterUnindexedRows, retry, input.scalarIndexes ? ARCHIVE_INDEXES : FULL_TEXT_INDEXES);
      indexesReady ||= !(outcome.kind === 'skip' && outcome.reason === 'empty table');
    } catch (error) {
      warn(`LanceDB archive index maintenance failed (rows stay searchable, unindexed): ${errorMessage(error)}`, error);
    }
  };
  let queued = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let dueSince: number | undefined;
  const queue = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    dueSince = undefined;
    if (queued) return;
    queued = true;
    void enqueueWrite(tableKey, async () => {
      queued = false;
      await maintain();
    });
  };
  return {
    async afterWrite() {
      // Index upkeep after the archive started closing would use the table while it closes: the next open does it.
      if (input.closing()) return;
      if (!indexesReady) return enqueueWrite(tableKey, maintain);
      if (delayMs === 0) return queue();
      const now = Date.now();
      dueSince ??= now;
      if (timer !== undefined) clearTimeout(timer);
      // A burst of writes postpones it, but never past 10 delays: writes that never pause still get their indexes.
      timer = setTimeout(queue, Math.max(0, Math.min(delayMs, dueSince + 10 * delayMs - now)));
      // Upkeep never keeps a process alive: what it leaves undone, the next open does.
      timer.unref?.();
    },
    hold() {
      if (timer === undefined) return false;
      clearTimeout(timer);
      timer = undefined;
      return true;
    },
    pending: () => timer !== undefined,
    flush: queue,
    maintain: () => enqueueWrite(tableKey, maintain),
  };
}
