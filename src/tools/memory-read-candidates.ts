/**
 * memory_read's candidates for a query: the archive's transcript segments (plain, from the times the query names,
 * for a recommendation the user's likes), cleared tool outputs, summaries when needed, and the live history.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import type { Archive, SearchHit } from '../archive/archive.js';
import { relativeTimeHints, timeHints, type TimeHint } from '../archive/ranking/query-dates.js';
import { searchTerms } from '../archive/ranking/search-terms.js';
import { questionIntent } from '../archive/ranking/question-intent.js';
import { kindsOf } from '../archive/ranking/kinds-of.js';
import type { Embedder } from '../embedding/embedder.js';
import type { MemoryReadArgs } from './memory-read-args.js';
import type { VectorCache } from './memory-read-semantic.js';
import type { ReadStrategy } from './memory-read-strategy.js';

export interface SearchAnswerOptions {
  strategy: ReadStrategy;
  /** Tokens the whole answer may take. */
  budget: number;
  countTokens: (text: string) => number;
  /** When the question is asked (ISO): relative times it names ("last Saturday") resolve against it. */
  at?: string;
  /** The conversation's live history, ranked beside the archive (its messages at `strategy.liveWeight`). */
  live?: () => Promise<readonly ConversationMessage[]>;
  /**
   * A semantic embedder, the vectors it already gave, and who is told when it fails: candidate messages are ranked by
   * meaning too (`strategy.semanticWeight`).
   */
  semantic?: { embedder: Embedder; cache: VectorCache; onWarning?: (message: string, error: unknown) => void };
}

/** The label of the live history's passages: not an archive label (nothing to read by it). */
export const LIVE_LABEL = 'live history';

/** Words of the user's statements of likes and plans, searched beside a recommendation question's own. */
const PREFERENCE_WORDS = 'prefer love enjoy favorite usually like';

/** Candidate segments from the times the query names, after the plain candidates (each segment once). */
async function datedCandidates(
  archive: Archive,
  filter: { conversationId: string; from?: string; to?: string; messagesOnly?: boolean },
  query: string,
  hints: readonly TimeHint[],
  limit: number,
): Promise<SearchHit[]> {
  const ranged = hints.filter((h) => h.month === undefined);
  const lists = await Promise.all(
    ranged.map((h) => {
      // The hint narrows the caller's own from/to, never widens it.
      const from = new Date(h.fromMs).toISOString();
      const to = new Date(h.toMs).toISOString();
      return archive.search({
        ...filter,
        kind: 'transcript',
        query,
        limit,
        from: filter.from && filter.from > from ? filter.from : from,
        to: filter.to && filter.to < to ? filter.to : to,
      });
    }),
  );
  return lists.flat();
}

/**
 * Tool outputs cleared from the live history (tier 2 of compaction) that no transcript segment holds yet: the only
 * verbatim copy of those outputs, searched beside the segments. Superseded ones are left out (their segment has them).
 * They are few and short-lived (the next fold's segment holds them): counted first (LanceDB counts by its scalar
 * indexes, a third of a full-text search's time at 1M rows), they are searched only when there are some.
 */
async function clearedOutputs(
  archive: Archive,
  filter: { conversationId: string; messagesOnly?: boolean },
  query: string,
  limit: number,
): Promise<SearchHit[]> {
  const { messagesOnly: _lean, ...listed } = filter;
  if (archive.count && (await archive.count({ ...listed, kind: 'tool_output', unmarkedOnly: true })) === 0) return [];
  const hits = await archive.search({ ...filter, kind: 'tool_output', query, limit });
  return hits.filter((hit) => hit.entry.parentLabel === undefined);
}

/** Two hit lists of one query merged best first (stable: on a tie, the first list's hit leads). */
function byScore(first: readonly SearchHit[], second: readonly SearchHit[]): SearchHit[] {
  if (second.length === 0) return [...first];
  return [...first.map((hit, i) => ({ hit, i })), ...second.map((hit, i) => ({ hit, i: first.length + i }))]
    .sort((a, b) => b.hit.score - a.hit.score || a.i - b.i)
    .map((x) => x.hit);
}

function uniqueByLabel(hits: readonly SearchHit[]): SearchHit[] {
  const seen = new Set<string>();
  return hits.filter((hit) => !seen.has(hit.entry.label) && seen.add(hit.entry.label) !== undefined);
}

export interface Candidates {
  transcripts: SearchHit[];
  /** Summaries searched up front (undefined: searched only when needed, by `searchSummaries`). */
  early: SearchHit[] | undefined;
  searchSummaries: () => Promise<SearchHit[]>;
  hints: TimeHint[];
  /** Words naming kinds of the categories the query names (`kindsOf`), ranked at `strategy.kindsWeight`. */
  kinds: string[];
}

/** The archive searches of one query: transcript segments (plain, from the times it names, cleared outputs) and summaries. */
export async function findCandidates(archive: Archive, conversationId: string, args: MemoryReadArgs, options: SearchAnswerOptions): Promise<Candidates> {
  const { strategy } = options;
  const query = args.query!;
  const archiveQuery = strategy.cleanQuery ? searchTerms(query, { stem: false }).join(' ') || query : query;
  const filter = {
    conversationId,
    ...(args.depth !== undefined ? { depth: args.depth } : {}),
    ...(args.from !== undefined ? { from: args.from } : {}),
    ...(args.to !== undefined ? { to: args.to } : {}),
  };
  // Windows show a segment's messages, never its text: its searches may leave the text out (fewer columns read).
  const segments = strategy.display === 'windows' ? { ...filter, messagesOnly: true } : filter;
  // Transcripts are depth 0: a depth above 0 asks for summaries only.
  const wantTranscripts = args.kind !== 'summary' && (args.depth === undefined || args.depth === 0);
  const hints =
    strategy.dateBoost > 0 ? [...timeHints(query), ...(options.at !== undefined && strategy.relativeDates ? relativeTimeHints(query, options.at) : [])] : [];
  const intent = questionIntent(query);
  const candidates = Math.max(intent.aggregate || intent.preference ? strategy.aggregateCandidates : strategy.candidateSegments, args.limit);
  // A recommendation draws candidates from where the user spoke of likes and plans on the question's topic too.
  const likesQuery = intent.preference && strategy.preferenceBoost > 0 ? `${archiveQuery} ${PREFERENCE_WORDS}` : undefined;
  const kinds = strategy.kindsOf === 'none' ? [] : kindsOf(query, { questions: strategy.kindsOf, depth: strategy.kindsDepth, limit: strategy.kindsLimit });
  const kindsQuery = kinds.length > 0 && strategy.kindsCandidates > 0 ? kinds.join(' ') : undefined;
  // A summary is shown by its line and text: its search reads those alone.
  const searchSummaries = async (): Promise<SearchHit[]> =>
    args.kind !== 'transcript' ? archive.search({ ...filter, kind: 'summary', query: archiveQuery, limit: args.limit, textOnly: true }) : [];
  // With summaries left out beside matching messages, their search runs only when no transcript matched.
  const summariesUpFront = !wantTranscripts || strategy.summaries !== 'none';
  const plainFound = wantTranscripts ? archive.search({ ...segments, kind: 'transcript', query: archiveQuery, limit: candidates }) : Promise.resolve([]);
  // The dated search is the plain one within the dates: when the plain one returned fewer than asked, it returned every
  // match, the dated ones among them, so the dated search would add nothing and is not made.
  const datedFound =
    wantTranscripts && hints.length > 0
      ? plainFound.then((hits) => (hits.length < candidates ? [] : datedCandidates(archive, segments, archiveQuery, hints, Math.ceil(candidates / 2))))
      : [];
  const [plain, outputs, dated, early, likes, named] = await Promise.all([
    plainFound,
    wantTranscripts ? clearedOutputs(archive, segments, archiveQuery, candidates) : [],
    datedFound,
    summariesUpFront ? searchSummaries() : undefined,
    wantTranscripts && likesQuery ? archive.search({ ...segments, kind: 'transcript', query: likesQuery, limit: Math.ceil(candidates / 2) }) : [],
    wantTranscripts && kindsQuery ? archive.search({ ...segments, kind: 'transcript', query: kindsQuery, limit: strategy.kindsCandidates }) : [],
  ]);
  const archived = uniqueByLabel([...byScore(plain, outputs), ...dated, ...likes, ...named]);
  const live = wantTranscripts && options.live && strategy.liveWeight > 0 ? await liveHit(options.live, conversationId, args) : undefined;
  return { transcripts: live ? [...archived, live] : archived, early, searchSummaries, hints, kinds };
}

/**
 * The live history as one more candidate, after the archive's: its conversation messages (no clip-archive, no note)
 * within the call's from/to. An agent asking memory_read gets every matching message, wherever it lives now.
 */
async function liveHit(load: () => Promise<readonly ConversationMessage[]>, conversationId: string, args: MemoryReadArgs): Promise<SearchHit | undefined> {
  const messages = (await load()).filter(
    (m) =>
      (m.kind === undefined || m.kind === 'message') &&
      (args.from === undefined || m.createdAt >= args.from) &&
      (args.to === undefined || m.createdAt <= args.to),
  );
  if (messages.length === 0) return undefined;
  const span = { start: messages[0]!.createdAt, end: messages[messages.length - 1]!.createdAt };
  const entry: ArchiveEntry = {
    kind: 'transcript',
    label: LIVE_LABEL,
    conversationId,
    depth: 0,
    ...span,
    count: messages.length,
    content: '',
    sourceIds: messages.map((m) => m.id),
    operationId: '',
    messages: [...messages],
  };
  return { entry, score: 0 };
}
