/**
 * `write` of the LanceDB archive: validate, embed, then append (or merge) in the table's queue, beside the writes
 * queued with it (`lancedb-write-group.ts`). A label is replaced
 * only by a write of the operation that holds it (a retry), never another operation's row.
 */
import type { ArchiveEntry } from '../../conversation/types.js';
import { embedAll } from '../../embedding/embedder.js';
import { InvalidArgumentError, MemfoldError } from '../../errors.js';
import type { LanceHandle } from './lancedb-handle.js';
import { rowKey, validateEntry } from './lancedb-schema.js';
import { submitWrite } from './lancedb-write-group.js';

export interface WriteInput {
  handle: LanceHandle;
  entries: ArchiveEntry[];
  /**
   * Whether a search will use vectors (the vector weight above 0): without, rows are stored with none, and a later
   * search with vectors on finds them by full text alone.
   */
  withVectors: boolean;
  /** The caller found these labels free under the conversation's lock (`WriteOptions.labelsFree`): no lookup first. */
  labelsFree?: boolean;
}

export async function writeEntries({ handle, entries, withVectors, labelsFree = false }: WriteInput): Promise<void> {
  const { namespace, embedder } = handle;
  if (!Array.isArray(entries)) throw new InvalidArgumentError('entries', 'must be an array');
  if (entries.length === 0) return;
  const times = entries.map((entry, index) => validateEntry(entry, index));
  // Within one call the last entry of a label wins, as if written one after another.
  const latest = new Map<string, number>();
  entries.forEach((entry, index) => latest.set(rowKey(namespace, entry.conversationId, entry.label), index));
  const chosen = [...latest.values()].sort((a, b) => a - b);
  const vectors = withVectors
    ? await embedAll(
        embedder,
        chosen.map((index) => entries[index]!.content),
      )
    : undefined;
  if (vectors && (vectors.length !== chosen.length || vectors.some((vector) => vector.length !== embedder.dimensions))) {
    throw new MemfoldError(
      'embedding_error',
      `Embedder ${embedder.id} returned vectors of the wrong count or size (expected ${chosen.length} x ${embedder.dimensions})`,
    );
  }
  const chosenEntries = chosen.map((index) => entries[index]!);
  const keys = chosenEntries.map((entry) => rowKey(namespace, entry.conversationId, entry.label));
  // Writes of a conversation never race (one table queue here, the conversation's lock across processes); writes of
  // other conversations queued meanwhile share its commit (`lancedb-write-group.ts`).
  const refused = await submitWrite(handle, { entries: chosenEntries, times: chosen.map((index) => times[index]!), vectors, keys, labelsFree });
  await handle.upkeep.afterWrite();
  if (refused > 0) throw await labelsTakenError(handle, entries, chosen);
}

/** The error of a write some of whose labels another operation holds, naming them. */
async function labelsTakenError(handle: LanceHandle, entries: readonly ArchiveEntry[], chosen: readonly number[]): Promise<MemfoldError> {
  const taken: string[] = [];
  for (const index of chosen) {
    const entry = entries[index]!;
    const [stored] = await handle.read(entry.conversationId, [entry.label]);
    if (stored !== undefined && stored.operationId !== entry.operationId) taken.push(`${entry.label} (operation ${stored.operationId})`);
  }
  return new MemfoldError(
    'archive_error',
    `LanceDB archive write refused: ${taken.length > 0 ? taken.join(', ') : 'some labels'} already belong to another operation, and a write never replaces another operation's row`,
    {
      details: { labels: taken },
    },
  );
}
