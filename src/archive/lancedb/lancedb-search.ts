/** `search` of the LanceDB archive: full text (BM25) and vectors, each prefiltered to one conversation, fused by weighted RRF. */
import { MatchQuery, type Query } from '@lancedb/lancedb';
import { embedAll } from '../../embedding/embedder.js';
import { errorMessage, InvalidArgumentError } from '../../errors.js';
import type { SearchHit, SearchQuery } from '../archive.js';
import { filterWhere } from './lancedb-filter.js';
import type { LanceHandle } from './lancedb-handle.js';
import { COLUMN, fromRow, labelOfKey } from './lancedb-schema.js';
import { candidateDepth, fuseRankings } from './rrf.js';

/**
 * What a `messagesOnly` hit is read from: the key (namespace, conversation and label in one, which the scope check
 * reads), the text with the frames its messages are rebuilt from (or a format-1 row's JSON), the parent, and the kind
 * when the query does not name it. LanceDB reads each column of the hits on its own: at 1M rows a search of 20
 * reading these took a fifth less than one reading the 13 columns before (docs/performance.md).
 */
const MESSAGE_COLUMNS: readonly string[] = [COLUMN.key, COLUMN.content, COLUMN.frames, COLUMN.messages, COLUMN.parentLabel];
/** What a `textOnly` hit is read from: the key, the text, and what the hit's line says of the entry. */
const TEXT_COLUMNS: readonly string[] = [COLUMN.key, COLUMN.content, COLUMN.depth, COLUMN.startTime, COLUMN.endTime, COLUMN.count];
/** What the entry of a `messagesOnly` or `textOnly` hit has in place of the columns not read. */
const LEFT_OUT = { [COLUMN.operationId]: '', [COLUMN.depth]: 0, [COLUMN.startTime]: '', [COLUMN.endTime]: '', [COLUMN.count]: 0 };

/** A query with at least one letter or digit has words for full text; otherwise only vectors can answer. */
const HAS_WORDS = /[\p{L}\p{N}]/u;

export interface SearchInput {
  handle: LanceHandle;
  query: SearchQuery;
  weights: { fullText: number; vector: number };
  limits: { searchLimit: number; maxSearchLimit: number };
}

export async function searchEntries({ handle, query, weights, limits }: SearchInput): Promise<SearchHit[]> {
  handle.ensureOpen();
  if (typeof query?.query !== 'string') throw new InvalidArgumentError('query', 'must be a string');
  const limit = query.limit ?? limits.searchLimit;
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidArgumentError('limit', `must be an integer from 1 to ${limits.maxSearchLimit}`);
  const take = Math.min(limit, limits.maxSearchLimit);
  const scope: Scope = {
    where: filterWhere(handle.namespace, query),
    depth: candidateDepth(take, weights),
    ...picked(query),
  };
  const byKey = new Map<string, Record<string, unknown>>();
  const keysOf = (found: Record<string, unknown>[]) =>
    found.map((row) => {
      const key = String(row[COLUMN.key]);
      if (!byKey.has(key)) byKey.set(key, row);
      return key;
    });
  const [fullText, nearest] = await Promise.all([fullTextSearch(handle, query, weights, scope), vectorSearch(handle, query, weights, scope)]);
  const ranked = fuseRankings([
    { ids: keysOf(fullText), weight: weights.fullText },
    { ids: keysOf(nearest), weight: weights.vector },
  ]);
  const row = (id: string) => (scope.pick ? messagesRow(byKey.get(id)!, query) : byKey.get(id)!);
  return ranked.slice(0, take).map(({ id, score }) => ({ entry: fromRow(row(id)), score }));
}

type Scope = { where: string; depth: number; pick?: readonly string[] };

/** The columns a `messagesOnly` or `textOnly` search reads (both: either's), the kind when the query names none. */
function picked(query: SearchQuery): { pick?: readonly string[] } {
  if (query.messagesOnly !== true && query.textOnly !== true) return {};
  const columns = new Set([...(query.messagesOnly === true ? MESSAGE_COLUMNS : []), ...(query.textOnly === true ? TEXT_COLUMNS : [])]);
  if (query.kind === undefined) columns.add(COLUMN.kind);
  return { pick: [...columns] };
}

/** A `messagesOnly` or `textOnly` row as a whole one: conversation and label from its key, its kind the query's, the rest empty. */
function messagesRow(row: Record<string, unknown>, query: SearchQuery): Record<string, unknown> {
  return {
    ...LEFT_OUT,
    [COLUMN.kind]: query.kind,
    [COLUMN.conversationId]: query.conversationId,
    [COLUMN.label]: labelOfKey(String(row[COLUMN.key])),
    ...row,
  };
}

function fullTextSearch(handle: LanceHandle, query: SearchQuery, weights: SearchInput['weights'], { where, depth, pick }: Scope) {
  if (!(HAS_WORDS.test(query.query) && weights.fullText > 0)) return Promise.resolve([]);
  // A structured MatchQuery: the text is never parsed as query syntax, so no input can break it.
  const build = (q: Query) => q.fullTextSearch(new MatchQuery(query.query, COLUMN.content)).limit(depth);
  return handle.rows({ operation: 'full-text search', conversationId: query.conversationId, where, build, score: '_score', ...(pick ? { pick } : {}) });
}

async function vectorSearch(handle: LanceHandle, query: SearchQuery, weights: SearchInput['weights'], { where, depth, pick }: Scope) {
  if (weights.vector <= 0 || query.query.trim().length === 0) return [];
  let vector: Float32Array | undefined;
  try {
    [vector] = await embedAll(handle.embedder, [query.query]);
  } catch (error) {
    // A failing (remote) embedder must not take search down: full text still answers.
    handle.warn(`Embedder ${handle.embedder.id} failed; searching by full text only: ${errorMessage(error)}`, error);
    return [];
  }
  // A zero vector (no features) has no direction: cosine search cannot rank by it.
  if (!vector || vector.every((value) => value === 0)) return [];
  const found = vector;
  return handle.rows({
    operation: 'vector search',
    conversationId: query.conversationId,
    where,
    build: (q) => q.nearestTo(found).distanceType('cosine').limit(depth),
    score: '_distance',
    ...(pick ? { pick } : {}),
  });
}
