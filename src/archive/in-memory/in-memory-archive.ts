/**
 * The Archive adapter on a plain map: the LanceDB archive's contract without files, for
 * `createMemfold({ store: 'memory' })` and fast tests. Search is BM25 over the entries' words plus,
 * with an embedder, cosine similarity of vectors, fused as the LanceDB adapter fuses them
 * (`in-memory-ranking.ts` says how its words differ from LanceDB's tokenizer).
 */
import type { ArchiveEntry } from '../../conversation/types.js';
import { embedAll, type Embedder } from '../../embedding/embedder.js';
import { errorMessage, InvalidArgumentError, MemfoldError } from '../../errors.js';
import {
  checkFilter,
  compareEntriesByTime,
  requireConversationId,
  requireLabels,
  requireMarks,
  requireParentLabel,
  validateEntry,
  type CheckedFilter,
} from '../archive-entry-checks.js';
import { candidateDepth, defaultFusionWeights, fuseRankings } from '../lancedb/rrf.js';
import type { ListOptions, Archive, SearchHit, SearchQuery } from '../archive.js';
import { entryTerms, fullTextRanking, vectorRanking } from './in-memory-ranking.js';
import { entryDigest } from '../entry-digest.js';

/** One stored entry and what search needs of it. */
interface StoredEntry {
  namespace: string;
  entry: ArchiveEntry;
  startMs: number;
  endMs: number;
  terms: string[];
  vector?: Float32Array;
}

/** The rows of one in-memory archive "table". Pass one to several archives to share it (namespaces, reopening). */
export interface InMemoryArchiveState {
  /** By `JSON.stringify([namespace, conversationId, label])`. */
  rows: Map<string, StoredEntry>;
}

export function createInMemoryArchiveState(): InMemoryArchiveState {
  return { rows: new Map() };
}

export interface InMemoryArchiveOptions {
  /** Embeds entries on write and the query on search. Default none: search is full text alone. */
  embedder?: Embedder;
  /** Scope of conversations sharing the state. Default `default`. */
  namespace?: string;
  /** Weights of the two rankings in reciprocal rank fusion. Default as the LanceDB archive's (`defaultFusionWeights`). */
  fusionWeights?: { fullText: number; vector: number };
  /** The rows to use. Default: a fresh state of this archive alone. */
  state?: InMemoryArchiveState;
  /** Told when the embedder fails during a search (which then answers from full text). Default: ignored. */
  onWarning?: (message: string, error: unknown) => void;
}

const SEARCH_LIMIT = 5;
const MAX_SEARCH_LIMIT = 50;
/** A query with at least one letter or digit has words for full text; otherwise only vectors can answer. */
const HAS_WORDS = /[\p{L}\p{N}]/u;

const rowKey = (namespace: string, conversationId: string, label: string) => JSON.stringify([namespace, conversationId, label]);

/** A copy without a null parentLabel (the port leaves it out when unset), so callers cannot change stored rows. */
function copyEntry(entry: ArchiveEntry): ArchiveEntry {
  const copy = structuredClone(entry);
  if (copy.parentLabel === null || copy.parentLabel === undefined) delete copy.parentLabel;
  if (copy.messages === undefined) delete copy.messages;
  if (copy.sessions === undefined || copy.sessions === null) delete copy.sessions;
  return copy;
}

function matches(row: StoredEntry, namespace: string, filter: CheckedFilter): boolean {
  const { entry } = row;
  return (
    row.namespace === namespace &&
    entry.conversationId === filter.conversationId &&
    (filter.depth === undefined || entry.depth === filter.depth) &&
    (filter.kind === undefined || entry.kind === filter.kind) &&
    (filter.fromMs === undefined || row.endMs >= filter.fromMs) &&
    (filter.toMs === undefined || row.startMs <= filter.toMs) &&
    (!filter.unmarkedOnly || entry.parentLabel === undefined)
  );
}

/** The fusion weights asked for, or the embedder's default; refused when one is negative or not finite. */
function checkedWeights(options: InMemoryArchiveOptions): { fullText: number; vector: number } {
  const { embedder } = options;
  const weights = options.fusionWeights ?? (embedder ? defaultFusionWeights(embedder.id) : { fullText: 1, vector: 0 });
  for (const [name, weight] of Object.entries(weights)) {
    if (!(Number.isFinite(weight) && weight >= 0)) throw new InvalidArgumentError(`fusionWeights.${name}`, 'must be a finite number >= 0');
  }
  return weights;
}

/** The stored rows with these labels in this conversation, in the order asked (missing labels left out). */
function storedRows(input: { rows: Map<string, StoredEntry>; namespace: string; conversationId: string; labels: unknown }): StoredEntry[] {
  const { rows, namespace, conversationId } = input;
  requireConversationId(conversationId);
  return requireLabels(input.labels).flatMap((label) => {
    const row = rows.get(rowKey(namespace, conversationId, label));
    return row ? [row] : [];
  });
}

export function createInMemoryArchive(options: InMemoryArchiveOptions = {}): Archive {
  const namespace = options.namespace ?? 'default';
  if (typeof namespace !== 'string' || namespace.length === 0) throw new InvalidArgumentError('namespace', 'must be a non-empty string');
  const { embedder } = options;
  const weights = checkedWeights(options);
  const { rows } = options.state ?? createInMemoryArchiveState();
  const warn = options.onWarning ?? (() => undefined);
  let closed = false;
  const ensureOpen = (): void => {
    if (closed) throw new MemfoldError('archive_error', 'In-memory archive is closed');
  };
  const scoped = (filter: CheckedFilter) => [...rows.entries()].filter(([, row]) => matches(row, namespace, filter));
  /** Each label's parent (`null` clears it); labels with no row are left alone. */
  const setParents = (conversationId: string, parents: ReadonlyMap<string, string | null>): void => {
    for (const [label, parentLabel] of parents) {
      const row = rows.get(rowKey(namespace, conversationId, label));
      if (row === undefined) continue;
      if (parentLabel === null) delete row.entry.parentLabel;
      else row.entry.parentLabel = parentLabel;
    }
  };

  return {
    async write(entries: ArchiveEntry[]): Promise<void> {
      ensureOpen();
      if (!Array.isArray(entries)) throw new InvalidArgumentError('entries', 'must be an array');
      const times = entries.map((entry, index) => validateEntry(entry, index));
      // Within one call the last entry of a label wins, as if written one after another.
      const latest = new Map<string, number>();
      entries.forEach((entry, index) => latest.set(rowKey(namespace, entry.conversationId, entry.label), index));
      const chosen = [...latest.entries()].sort(([, a], [, b]) => a - b);
      // Vectors only where a search will use them: none with the vector ranking off.
      const vectors = await vectorsOf(
        weights.vector > 0 ? embedder : undefined,
        chosen.map(([, index]) => entries[index]!.content),
      );
      ensureOpen();
      storeRows({ rows, namespace, entries, times, chosen, vectors });
    },

    async read(conversationId, labels) {
      ensureOpen();
      return storedRows({ rows, namespace, conversationId, labels }).map((row) => copyEntry(row.entry));
    },

    async readDigests(conversationId, labels) {
      ensureOpen();
      return storedRows({ rows, namespace, conversationId, labels }).map((row) => entryDigest(row.entry));
    },

    async list(listOptions: ListOptions) {
      ensureOpen();
      return scoped(checkFilter(listOptions))
        .map(([, row]) => row)
        .sort(compareEntriesByTime)
        .map((row) => copyEntry(row.entry));
    },

    async search(query: SearchQuery): Promise<SearchHit[]> {
      ensureOpen();
      return searchRows({ candidatesOf: () => scoped(checkFilter(query)).map(([key, row]) => ({ key, ...row })), query, weights, embedder, warn });
    },

    async mark(conversationId, labels, parentLabel) {
      ensureOpen();
      requireConversationId(conversationId);
      const parent = requireParentLabel(parentLabel);
      setParents(conversationId, new Map(requireLabels(labels).map((label) => [label, parent])));
    },

    async markEach(conversationId, marks) {
      ensureOpen();
      requireConversationId(conversationId);
      setParents(conversationId, requireMarks(marks));
    },

    async delete(conversationId, labels) {
      ensureOpen();
      requireConversationId(conversationId);
      for (const label of requireLabels(labels)) rows.delete(rowKey(namespace, conversationId, label));
    },

    async eraseConversation(conversationId) {
      ensureOpen();
      requireConversationId(conversationId);
      const doomed = scoped(checkFilter({ conversationId }));
      for (const [key] of doomed) rows.delete(key);
      return { entries: doomed.length, rowsRewritten: 0 };
    },

    async close() {
      closed = true;
    },
  };
}

/**
 * Store the chosen entries at once (no await: the check against stored rows and the writes happen together). A label
 * is replaced only by a write of the operation that holds it (a retry): never another's row.
 */
function storeRows(input: {
  rows: Map<string, StoredEntry>;
  namespace: string;
  entries: readonly ArchiveEntry[];
  times: readonly ReturnType<typeof validateEntry>[];
  chosen: readonly [string, number][];
  vectors: readonly (Float32Array | undefined)[];
}): void {
  const { rows, namespace, entries, times, chosen, vectors } = input;
  const taken: string[] = [];
  chosen.forEach(([key, index], i) => {
    const entry = entries[index]!;
    const stored = rows.get(key);
    if (stored !== undefined && stored.entry.operationId !== entry.operationId) {
      taken.push(`${entry.label} (operation ${stored.entry.operationId})`);
      return;
    }
    const vector = vectors[i];
    rows.set(key, { namespace, entry: copyEntry(entry), ...times[index]!, terms: entryTerms(entry.content), ...(vector ? { vector } : {}) });
  });
  if (taken.length > 0) {
    throw new MemfoldError(
      'archive_error',
      `In-memory archive write refused: ${taken.join(', ')} already belong to another operation, and a write never replaces another operation's row`,
      {
        details: { labels: taken },
      },
    );
  }
}

/** Full text and vectors over the scoped candidates, fused by weighted RRF. */
async function searchRows(input: {
  /** The rows the query's filter scopes, read once the query is checked. */
  candidatesOf: () => (StoredEntry & { key: string })[];
  query: SearchQuery;
  weights: { fullText: number; vector: number };
  embedder: Embedder | undefined;
  warn: (message: string, error: unknown) => void;
}): Promise<SearchHit[]> {
  const { query, weights, embedder, warn } = input;
  if (typeof query?.query !== 'string') throw new InvalidArgumentError('query', 'must be a string');
  const limit = query.limit ?? SEARCH_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidArgumentError('limit', `must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
  const take = Math.min(limit, MAX_SEARCH_LIMIT);
  const candidates = input.candidatesOf();
  // Each ranking contributes a deeper candidate list than the final limit, so fusion can reorder.
  const depth = candidateDepth(take, weights);
  const fullText = HAS_WORDS.test(query.query) && weights.fullText > 0 ? fullTextRanking(candidates, query.query, depth) : [];
  let nearest: string[] = [];
  if (embedder !== undefined && weights.vector > 0 && query.query.trim().length > 0) {
    try {
      const [vector] = await embedAll(embedder, [query.query]);
      if (vector) nearest = vectorRanking(candidates, vector, depth);
    } catch (error) {
      // A failing (remote) embedder must not take search down: full text still answers.
      warn(`Embedder ${embedder.id} failed; searching by full text only: ${errorMessage(error)}`, error);
    }
  }
  const byKey = new Map(candidates.map((row) => [row.key, row.entry]));
  return fuseRankings([
    { ids: fullText, weight: weights.fullText },
    { ids: nearest, weight: weights.vector },
  ])
    .slice(0, take)
    .map(({ id, score }) => ({ entry: copyEntry(byKey.get(id)!), score }));
}

/** Vectors of the entries' content, checked for count and size; none without an embedder (the caller passes none with the vector ranking off). */
async function vectorsOf(embedder: Embedder | undefined, contents: string[]): Promise<Array<Float32Array | undefined>> {
  if (embedder === undefined) return contents.map(() => undefined);
  const vectors = await embedAll(embedder, contents);
  const size = embedder.dimensions || vectors[0]?.length;
  if (vectors.length !== contents.length || vectors.some((vector) => vector.length !== size)) {
    throw new MemfoldError('embedding_error', `Embedder ${embedder.id} returned vectors of the wrong count or size (expected ${contents.length} x ${size})`);
  }
  return vectors;
}
