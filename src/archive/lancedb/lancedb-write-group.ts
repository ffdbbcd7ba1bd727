/**
 * Group commit of archive writes: writes that reach one table while an earlier write holds its queue are appended
 * together, in one LanceDB commit (one manifest, one data fragment), when they come in. Every write still resolves
 * only once its own rows are committed, so a caller's read-back and commit wait for its durable write as before, and
 * fails only for a fault of its own or of the table (a write whose rows cannot be stored fails alone).
 * Each commit costs a manifest and leaves a fragment every later query scans until index upkeep; compactions of many
 * conversations at once wrote one each per batch and per transcript, and their queries slowed with the fragment count.
 */
import type { ArchiveEntry } from '../../conversation/types.js';
import { appendColumns, entriesTable } from './lancedb-entries-table.js';
import { chunked, sqlStringList } from './lancedb-filter.js';
import { type LanceHandle, wrap } from './lancedb-handle.js';
import { COLUMN } from './lancedb-schema.js';
import { isCommitConflict } from './lancedb-writes.js';

/** One write's rows, validated and embedded: `keys[i]` is the row key of `entries[i]`, no key twice. */
export interface PreparedWrite {
  entries: ArchiveEntry[];
  times: Array<{ startMs: number; endMs: number }>;
  vectors: Float32Array[] | undefined;
  keys: string[];
  /** Its keys were found free under the conversation's lock and are written for the first time: no lookup first. */
  labelsFree: boolean;
}

interface Member {
  write: PreparedWrite;
  resolve(refused: number): void;
  reject(error: unknown): void;
}

/** The group not started yet, per open table handle: a write made meanwhile joins it. */
const open = new WeakMap<LanceHandle, Member[]>();

/**
 * Write `write` in the table's queue, with the writes queued beside it. Resolves to the number of its rows refused
 * because another operation holds their label (a write never replaces another operation's row).
 */
export function submitWrite(handle: LanceHandle, write: PreparedWrite): Promise<number> {
  handle.ensureOpen();
  return new Promise<number>((resolve, reject) => {
    const member = { write, resolve, reject };
    const waiting = open.get(handle);
    if (waiting) {
      waiting.push(member);
      return;
    }
    const group = [member];
    open.set(handle, group);
    // A commit conflict runs the task again: that attempt looks every key up, as a retry must.
    let attempts = 0;
    handle
      .mutate('write', async () => {
        // Once the group's turn comes, later writes form the next group.
        if (open.get(handle) === group) open.delete(handle);
        const outcomes = await writeGroupOrEach(
          handle,
          group.map((m) => m.write),
          attempts++ === 0,
        );
        group.forEach((m, i) => {
          const outcome = outcomes[i]!;
          if ('error' in outcome) m.reject(wrap('write', outcome.error));
          else m.resolve(outcome.refused);
        });
      })
      .catch((error: unknown) => {
        if (open.get(handle) === group) open.delete(handle);
        for (const m of group) m.reject(error);
      });
  });
}

type Outcome = { refused: number } | { error: unknown };

/**
 * The group in one commit; when that fails (not by a commit conflict, which the queue retries whole), each write
 * alone, in order, so a write whose own rows the table refuses fails alone and the writes beside it still land (a
 * write the failed commit stored part of finds those rows and merges them).
 */
async function writeGroupOrEach(handle: LanceHandle, writes: readonly PreparedWrite[], firstAttempt: boolean): Promise<Outcome[]> {
  try {
    return (await writeGroup(handle, writes, firstAttempt)).map((refused) => ({ refused }));
  } catch (error) {
    if (writes.length === 1 || isCommitConflict(error)) throw error;
  }
  const outcomes: Outcome[] = [];
  for (const write of writes) {
    try {
      outcomes.push({ refused: (await writeGroup(handle, [write], false))[0]! });
    } catch (error) {
      if (isCommitConflict(error)) throw error;
      outcomes.push({ error });
    }
  }
  return outcomes;
}

/**
 * The writes in order, as if one after another: those naming no stored label (nor a label of an earlier write of the
 * group) in one append per vector layout; the rest each by the merge that replaces only its own operation's rows.
 * Idempotent, as the queue's conflict retry needs: a retry finds the appended rows stored and merges them.
 */
async function writeGroup(handle: LanceHandle, writes: readonly PreparedWrite[], firstAttempt: boolean): Promise<number[]> {
  await handle.ensureColumns();
  const columns = await handle.columnsForWrite();
  // Keys found free under their conversation's lock need no lookup on a first attempt (the lookup of a small write
  // cost 7-25 ms, on the compaction's path after its last summary); any other attempt may find its own rows stored.
  const stored = await storedKeys(
    handle,
    writes.flatMap((w) => (firstAttempt && w.labelsFree ? [] : w.keys)),
  );
  const claimed = new Set<string>();
  const appended: PreparedWrite[] = [];
  const merged: number[] = [];
  writes.forEach((write, index) => {
    if (write.keys.some((key) => stored.has(key) || claimed.has(key))) merged.push(index);
    else appended.push(write);
    for (const key of write.keys) claimed.add(key);
  });
  for (const withVectors of [false, true]) {
    const part = appended.filter((w) => (w.vectors !== undefined) === withVectors);
    if (part.length === 0) continue;
    // An append leaves out the nullable columns it has nothing for (vectors, a later version's): LanceDB fills nulls.
    const vectors = withVectors ? part.flatMap((w) => w.vectors!) : undefined;
    const data = entriesTable(
      appendColumns(columns, withVectors),
      handle.embedder,
      handle.namespace,
      part.flatMap((w) => w.entries),
      part.flatMap((w) => w.times),
      vectors,
    );
    await handle.table.add(data);
  }
  const refused = writes.map(() => 0);
  for (const index of merged) {
    const write = writes[index]!;
    const data = entriesTable(columns, handle.embedder, handle.namespace, write.entries, write.times, write.vectors);
    // A label is replaced only by a write of the operation that holds it (a retry): never another's row.
    const result = await handle.table
      .mergeInsert(COLUMN.key)
      .whenMatchedUpdateAll({ where: `target.${COLUMN.operationId} = source.${COLUMN.operationId}` })
      .whenNotMatchedInsertAll()
      .execute(data);
    refused[index] = data.numRows - result.numInsertedRows - result.numUpdatedRows;
  }
  return refused;
}

/**
 * Which of `keys` are stored rows (the write queue is held: nothing writes meanwhile). Most writes name none: a merge
 * joins the keys of every fragment the key index does not cover yet, so it costs several appends; a lookup does not.
 */
async function storedKeys(handle: LanceHandle, keys: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const slice of chunked(keys)) {
    const rows = await handle.table
      .query()
      .where(`${COLUMN.key} IN ${sqlStringList(slice)}`)
      .select([COLUMN.key])
      .toArray();
    for (const row of rows as Array<Record<string, unknown>>) found.add(String(row[COLUMN.key]));
  }
  return found;
}
