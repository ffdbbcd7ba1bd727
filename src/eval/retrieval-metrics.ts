/**
 * LongMemEval's own retrieval metrics, pure, so memory_read's answer compares with published retrievers:
 * `recall_all@k` (every correct item in the first k) and `ndcg_any@k`, at session and at turn level, as
 * LongMemEval's `eval_utils.py` computes them: its DCG gives the first two ranks full weight
 * (rel₁ + Σ_{i≥2} relᵢ / log₂ i); with no correct item, recall_all is 1 and ndcg_any 0. Averaged over the
 * questions that are not abstentions.
 *
 * An answer is text, not a ranked list: an item's rank is where it is first readable in the answer (the
 * readable definition), items shown earlier ranking higher; items not readable are not retrieved.
 */
import type { EvalConversation, EvalQuestion } from './eval-types.js';
import { readablePosition, type ReadableView } from './readable.js';

/** The cut-offs reported. */
export const RETRIEVAL_KS: readonly number[] = [5, 10];

/** 1 when every correct item is among the first k ranked (also when there is none), else 0. */
export function recallAll(ranked: readonly string[], correct: readonly string[], k: number): number {
  const top = new Set(ranked.slice(0, k));
  return correct.every((id) => top.has(id)) ? 1 : 0;
}

function dcg(relevances: readonly number[]): number {
  return relevances.reduce((sum, rel, i) => sum + (i === 0 ? rel : rel / Math.log2(i + 1)), 0);
}

/** nDCG@k with binary relevance; the ideal ranks every correct item first. 0 when there is no correct item. */
export function ndcgAny(ranked: readonly string[], correct: readonly string[], k: number): number {
  const wanted = new Set(correct);
  const ideal = dcg(Array.from({ length: Math.min(wanted.size, k) }, () => 1));
  if (ideal === 0) return 0;
  return dcg(ranked.slice(0, k).map((id) => (wanted.has(id) ? 1 : 0))) / ideal;
}

/** `session recall_all@5`, `turn ndcg_any@10`, …: one number per level, metric and k. */
export type RetrievalScores = Record<string, number>;

export function retrievalScores(levels: Readonly<Record<'session' | 'turn', { ranked: readonly string[]; correct: readonly string[] }>>): RetrievalScores {
  const scores: RetrievalScores = {};
  for (const level of ['session', 'turn'] as const) {
    const { ranked, correct } = levels[level];
    for (const k of RETRIEVAL_KS) {
      scores[`${level} recall_all@${k}`] = recallAll(ranked, correct, k);
      scores[`${level} ndcg_any@${k}`] = ndcgAny(ranked, correct, k);
    }
  }
  return scores;
}

/** A turn of the searched corpus: its id, its session, whether it is a corpus turn (LongMemEval's: user turns), its text. */
export interface CorpusTurn {
  id: string;
  session: string;
  user: boolean;
  content: string;
}

/**
 * The retrieval scores of one answer: turns ranked by where they are first readable in it; sessions by their
 * first readable turn (any role); the turn level ranks and counts user turns only, as LongMemEval's corpus does.
 */
export function answerRetrieval(
  turns: readonly CorpusTurn[],
  answer: ReadableView,
  correct: { sessions: readonly string[]; turns: readonly string[] },
): RetrievalScores {
  const found = turns
    .map((turn) => ({ turn, at: readablePosition(answer, turn.content) }))
    .filter((f) => f.at >= 0)
    .sort((a, b) => a.at - b.at);
  const sessions = [...new Set(found.map((f) => f.turn.session))];
  const userTurns = found.filter((f) => f.turn.user).map((f) => f.turn.id);
  return retrievalScores({ session: { ranked: sessions, correct: correct.sessions }, turn: { ranked: userTurns, correct: correct.turns } });
}

/** Mean of each score over the given questions; null when none. */
export function meanRetrieval(scores: readonly RetrievalScores[]): RetrievalScores | null {
  if (scores.length === 0) return null;
  const keys = Object.keys(scores[0]!);
  return Object.fromEntries(keys.map((key) => [key, scores.reduce((s, r) => s + (r[key] ?? 0), 0) / scores.length]));
}

/** A conversation's turns as the retrieval corpus; undefined when the dataset gives no sessions. */
export function conversationCorpus(conversation: Pick<EvalConversation, 'messages' | 'turnIds' | 'sessionKeys'>): CorpusTurn[] | undefined {
  const { sessionKeys } = conversation;
  if (!sessionKeys) return undefined;
  return conversation.messages.map((m, i) => ({ id: conversation.turnIds[i]!, session: sessionKeys[i]!, user: m.role === 'user', content: m.content }));
}

/** The retrieval scores of one answer to a question; undefined without a corpus or retrieval targets. */
export function questionRetrieval(
  corpus: readonly CorpusTurn[] | undefined,
  question: Pick<EvalQuestion, 'retrievalTargets'>,
  answer: ReadableView,
): RetrievalScores | undefined {
  if (!corpus || !question.retrievalTargets) return undefined;
  return answerRetrieval(corpus, answer, question.retrievalTargets);
}
