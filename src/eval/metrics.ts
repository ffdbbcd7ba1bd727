/**
 * Per-question scores and their aggregates. Pure: the runner gathers what the prompt holds and what
 * memory_read returns; these functions only count.
 */
import { answerTokenRetention } from './answer-tokens.js';
import type { EvalQuestion } from './eval-types.js';

/** memory_read is asked for this many hits per question; recall@10 and MRR@10 read them all. */
export const SEARCH_DEPTH = 10;
/** availability counts a question memory_read answers within this many hits. */
export const AVAILABILITY_RANK = 5;

export interface QuestionOutcome {
  conversationId: string;
  questionId: string;
  category: string;
  /** Every evidence turn is in the prompt (verbatim, or under a batch the clip-archive shows). */
  strict: boolean;
  /** At least one evidence turn is in the prompt. */
  lenient: boolean;
  /** 1-based rank of the first memory_read hit covering an evidence turn, null when none in SEARCH_DEPTH. */
  rank: number | null;
  /** Answer-token retention in the batches covering the evidence; null when not measured. */
  retention: number | null;
}

export interface QuestionEvidence {
  conversationId: string;
  question: EvalQuestion;
  /** Message ids of the evidence turns. */
  evidenceIds: readonly string[];
  /** Message ids the prompt holds verbatim or under a batch the clip-archive shows. */
  inPrompt: ReadonlySet<string>;
  /** For each ranked memory_read hit, the message ids it covers (empty for a prompt without memory). */
  hits?: ReadonlyArray<ReadonlySet<string>>;
  /** Text of the batches that summarize the evidence; absent when none does (evidence still live, or no memory). */
  coveringText?: string;
}

export function scoreQuestion(input: QuestionEvidence): QuestionOutcome {
  const { question, evidenceIds, inPrompt } = input;
  const index = (input.hits ?? []).slice(0, SEARCH_DEPTH).findIndex((covered) => evidenceIds.some((id) => covered.has(id)));
  const measurable = !question.adversarial && question.answer !== undefined && input.coveringText !== undefined;
  return {
    conversationId: input.conversationId,
    questionId: question.id,
    category: question.category,
    strict: evidenceIds.every((id) => inPrompt.has(id)),
    lenient: evidenceIds.some((id) => inPrompt.has(id)),
    rank: index < 0 ? null : index + 1,
    retention: measurable ? answerTokenRetention(question.answer!, input.coveringText!) : null,
  };
}

export interface QaMetrics {
  questions: number;
  survivalStrict: number;
  survivalLenient: number;
  recallAt1: number;
  recallAt5: number;
  recallAt10: number;
  mrr: number;
  /** survival + (1 - survival) x recall@5, per question with strict survival. */
  availability: number;
  /** The same with lenient survival. */
  availabilityLenient: number;
  /** Mean answer-token retention over the questions where it was measured; null when none. */
  answerRetention: number | null;
  retentionMeasured: number;
}

const within = (rank: number | null, k: number) => rank !== null && rank <= k;

export function aggregate(outcomes: readonly QuestionOutcome[]): QaMetrics {
  const n = outcomes.length;
  const mean = (value: (o: QuestionOutcome) => number) => (n === 0 ? 0 : outcomes.reduce((s, o) => s + value(o), 0) / n);
  const retained = outcomes.filter((o) => o.retention !== null);
  const reached = (survived: boolean, o: QuestionOutcome) => (survived || within(o.rank, AVAILABILITY_RANK) ? 1 : 0);
  return {
    questions: n,
    survivalStrict: mean((o) => (o.strict ? 1 : 0)),
    survivalLenient: mean((o) => (o.lenient ? 1 : 0)),
    recallAt1: mean((o) => (within(o.rank, 1) ? 1 : 0)),
    recallAt5: mean((o) => (within(o.rank, 5) ? 1 : 0)),
    recallAt10: mean((o) => (within(o.rank, 10) ? 1 : 0)),
    mrr: mean((o) => (o.rank === null ? 0 : 1 / o.rank)),
    availability: mean((o) => reached(o.strict, o)),
    availabilityLenient: mean((o) => reached(o.lenient, o)),
    answerRetention: retained.length === 0 ? null : retained.reduce((s, o) => s + o.retention!, 0) / retained.length,
    retentionMeasured: retained.length,
  };
}

/** `all` first, then each category by name (a category named `all` is reported as `category all`). */
export function aggregateByCategory(outcomes: readonly QuestionOutcome[]): Record<string, QaMetrics> {
  const categories = [...new Set(outcomes.map((o) => o.category))].sort();
  const name = (c: string) => (c === 'all' ? 'category all' : c);
  return Object.fromEntries([['all', aggregate(outcomes)], ...categories.map((c) => [name(c), aggregate(outcomes.filter((o) => o.category === c))])]);
}
