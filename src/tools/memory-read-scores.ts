/**
 * memory_read's ranking of the candidate messages, pure: BM25 with the neighbours' words, the segment's rank, and what
 * the question asks for (a date, the user's own words, a recommendation, the latest value, a count).
 */
import type { ConversationMessage } from '../conversation/types.js';
import { bm25Scores } from '../archive/ranking/bm25.js';
import { withNeighbourTerms } from '../archive/ranking/message-windows.js';
import { withinHints, type TimeHint } from '../archive/ranking/query-dates.js';
import { searchTerms } from '../archive/ranking/search-terms.js';
import { questionIntent, statesPreference } from '../archive/ranking/question-intent.js';
import { LIVE_LABEL } from './memory-read-candidates.js';
import type { PoolItem } from './memory-read-passages.js';
import type { ReadStrategy } from './memory-read-strategy.js';

/** The session a message belongs to: the caller's, or else its day. */
function sessionOf(message: ConversationMessage): string {
  return message.sessionId ?? message.createdAt.slice(0, 10);
}

/**
 * Each item's BM25 with its neighbours' words (normalized to the best), plus its segment's rank prior and the date
 * boost, and its closeness by meaning when `meaning` gives it (`memory-read-semantic.ts`); then shaped by what the question asks (`questionIntent`): the user's own statements of likes and plans
 * for a recommendation, later messages for the value as it stands now, and for a count, each session's items
 * after its best one discounted, so the answer reaches across sessions.
 */
export function messageScores(
  items: readonly PoolItem[],
  query: string,
  strategy: ReadStrategy,
  hints: readonly TimeHint[],
  /** The kinds of a category the question names (`kindsOf`), and each item's closeness by meaning (`memory-read-semantic.ts`). */
  extras: { kinds?: readonly string[]; meaning?: readonly number[] } = {},
): number[] {
  const { kinds = [], meaning = [] } = extras;
  const terms = items.map((item) => searchTerms(`${item.message.name ?? ''} ${item.text}`));
  const wanted = searchTerms(query);
  // The kinds of a category the question names ("guitar" for "instruments") count at their own weight.
  const weights = new Map(
    searchTerms(kinds.join(' '))
      .filter((t) => !wanted.includes(t))
      .map((t) => [t, strategy.kindsWeight]),
  );
  const raw = bm25Scores(withNeighbourTerms(items, terms, strategy.radius), [...wanted, ...weights.keys()], { weights });
  const best = Math.max(0, ...raw);
  const intent = questionIntent(query);
  const preference = intent.preference ? strategy.preferenceBoost : 0;
  const recency = intent.latest ? strategy.recencyBoost : 0;
  const own = intent.self ? strategy.selfBoost : 0;
  const firstSeq = items[0]?.message.seq ?? 0;
  const span = Math.max(1, (items[items.length - 1]?.message.seq ?? 0) - firstSeq);
  const scores = raw.map((score, i) => {
    const item = items[i]!;
    const stated = preference > 0 && item.message.role === 'user' && statesPreference(item.text) ? preference : 0;
    // Closeness by meaning (a semantic embedder's): it counts even where no word matches.
    const weight = item.segment.label === LIVE_LABEL ? strategy.liveWeight : 1;
    const close = strategy.semanticWeight * (meaning[i] ?? 0);
    if (score <= 0) return stated + weight * close;
    const dated = hints.length > 0 && withinHints(item.message.createdAt, hints) ? strategy.dateBoost : 0;
    const later = recency * ((item.message.seq - firstSeq) / span);
    // The user's own words must match: a neighbour's words alone do not make a message theirs.
    // A kind of the category the question names is the user's own word too ("my guitar" for "instruments I own").
    const said = own > 0 && item.message.role === 'user' && terms[i]!.some((t) => wanted.includes(t) || (strategy.selfKinds && weights.has(t))) ? own : 0;
    return weight * (score / best + strategy.segmentWeight / item.segmentRank + dated + stated + later + said + close);
  });
  return intent.aggregate && strategy.sessionSpread > 0 ? spreadAcrossSessions(items, scores, strategy.sessionSpread) : scores;
}

/** Scores divided by 1 + spread × (how many better items its session already has), so every session's best comes early. */
function spreadAcrossSessions(items: readonly PoolItem[], scores: readonly number[], spread: number): number[] {
  const seen = new Map<string, number>();
  const out = [...scores];
  scores
    .map((score, i) => ({ score, i }))
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .forEach(({ score, i }) => {
      const session = sessionOf(items[i]!.message);
      const before = seen.get(session) ?? 0;
      seen.set(session, before + 1);
      out[i] = score / (1 + spread * before);
    });
  return out;
}
