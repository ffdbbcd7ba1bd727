/**
 * Per-question scores and their aggregates. Pure: the runner gathers what the prompt holds and what
 * memory_read returns; these functions only count.
 */
import { answerTokenRetention } from './answer-tokens.js';
import type { EvalQuestion } from './eval-types.js';
import { scoreReadable, type ReadableScore, type ReadableView } from './readable.js';
import { meanRetrieval, type RetrievalScores } from './retrieval-metrics.js';

/** memory_read is asked for this many hits per question; recall@10 and MRR@10 read them all. */
export const SEARCH_DEPTH = 10;
/** availability counts a question memory_read answers within this many hits. */
export const AVAILABILITY_RANK = 5;

export interface QuestionOutcome {
  conversationId: string;
  questionId: string;
  category: string;
  /** Adversarial questions have no answer; the readable headline leaves them out. */
  adversarial: boolean;
  /** Every evidence turn is in the prompt: verbatim, or under a batch the clip-archive shows. */
  strict: boolean;
  /** At least one evidence turn is in the prompt, the same way. */
  lenient: boolean;
  /** Every evidence turn is in the prompt verbatim (no credit for a summary covering it). */
  verbatim: boolean;
  /** 1-based rank of the first memory_read hit covering an evidence turn, null when none in SEARCH_DEPTH. */
  rank: number | null;
  /** Answer-token retention in the depth-0 batches covering the evidence; null when not measured. */
  retention: number | null;
  /** Answer-token retention in the prompt's text about the evidence; null for questions without an answer. */
  promptRetention: number | null;
  /** What the model can read: the evidence turns' own text and the answer's words, in the prompt or the tool's answer. */
  readable: ReadableScore;
  /** Tokens (chars/4) of the memory_read answer to the question; null for a method without a tool. */
  toolTokens: number | null;
  /** LongMemEval's retrieval metrics of the tool's answer; null without a tool or retrieval targets. */
  retrieval: RetrievalScores | null;
}

export interface QuestionEvidence {
  conversationId: string;
  question: EvalQuestion;
  /** Message ids of the evidence turns. */
  evidenceIds: readonly string[];
  /** Message ids the prompt holds verbatim. */
  verbatim: ReadonlySet<string>;
  /** Message ids under the batches the clip-archive shows (none without memfold). */
  summarized?: ReadonlySet<string>;
  /** What the prompt says about the evidence: the evidence turns it holds verbatim and the shown batches covering any. */
  promptText: string;
  /** For each ranked memory_read hit, the message ids it covers (none without memfold). */
  hits?: ReadonlyArray<ReadonlySet<string>>;
  /** Text of the depth-0 batches that summarize the evidence; absent when none does. */
  coveringText?: string;
  /** The evidence turns' contents, in the order of `evidenceIds`. */
  evidenceTexts: readonly string[];
  /** The whole final prompt, as text. */
  prompt: ReadableView;
  /** The memory_read answer to the question (or a retrieval baseline's), and its size; absent for a method without a tool. */
  tool?: { view: ReadableView; tokens: number };
  /** LongMemEval's retrieval metrics of the tool's answer (`answerRetrieval`), when the dataset gives targets. */
  retrieval?: RetrievalScores;
}

export function scoreQuestion(input: QuestionEvidence): QuestionOutcome {
  const { question, evidenceIds, verbatim } = input;
  const summarized = input.summarized ?? new Set<string>();
  const inPrompt = (id: string) => verbatim.has(id) || summarized.has(id);
  const index = (input.hits ?? []).slice(0, SEARCH_DEPTH).findIndex((covered) => evidenceIds.some((id) => covered.has(id)));
  const answer = question.adversarial ? undefined : question.answer;
  return {
    conversationId: input.conversationId,
    questionId: question.id,
    category: question.category,
    adversarial: question.adversarial,
    strict: evidenceIds.every(inPrompt),
    lenient: evidenceIds.some(inPrompt),
    verbatim: evidenceIds.every((id) => verbatim.has(id)),
    rank: index < 0 ? null : index + 1,
    retention: answer !== undefined && input.coveringText !== undefined ? answerTokenRetention(answer, input.coveringText) : null,
    promptRetention: answer !== undefined ? answerTokenRetention(answer, input.promptText) : null,
    readable: scoreReadable(input.evidenceTexts, answer, input.prompt, input.tool?.view),
    toolTokens: input.tool ? input.tool.tokens : null,
    retrieval: input.retrieval ?? null,
  };
}

export interface QaMetrics {
  questions: number;
  /** Mean share of evidence turns readable (a 120-character stretch from a word, or the whole short turn) in the prompt or the tool's answer. */
  readableEvidence: number;
  /** The same with the earlier probe: the turn's first 120 characters. */
  readableEvidencePrefix: number;
  /** Share of questions with every evidence turn readable. */
  readableEvidenceAll: number;
  /** The mean share readable in the prompt alone, and in the tool's answer alone. */
  evidenceInPrompt: number;
  evidenceInTool: number;
  /** Mean share of the answer's normalized tokens in the prompt or the tool's answer, over questions with an answer; null when none. */
  readableAnswer: number | null;
  /** Tokens of the tool's answers (chars/4): mean and 90th percentile; null for a method without a tool. */
  toolTokensMean: number | null;
  toolTokensP90: number | null;
  /** Mean of LongMemEval's retrieval metrics over the questions that have them, abstention ones left out; null when none. */
  retrieval: RetrievalScores | null;
  retrievalQuestions: number;
  survivalStrict: number;
  survivalLenient: number;
  survivalVerbatim: number;
  recallAt1: number;
  recallAt5: number;
  recallAt10: number;
  mrr: number;
  /** survival + (1 - survival) x recall@5, per question, with strict survival. */
  availability: number;
  /** The same with lenient survival. */
  availabilityLenient: number;
  /** The same with verbatim survival: a summary covering the evidence earns nothing by itself. */
  availabilityVerbatim: number;
  /** Mean answer-token retention in the batches covering the evidence, over the questions measured; null when none. */
  answerRetention: number | null;
  retentionMeasured: number;
  /** Mean answer-token retention in the prompt's text about the evidence, over the questions with an answer. */
  answerInPrompt: number | null;
}

const within = (rank: number | null, k: number) => rank !== null && rank <= k;

export function aggregate(outcomes: readonly QuestionOutcome[]): QaMetrics {
  const n = outcomes.length;
  const mean = (value: (o: QuestionOutcome) => number) => (n === 0 ? 0 : outcomes.reduce((s, o) => s + value(o), 0) / n);
  const retained = outcomes.filter((o) => o.retention !== null);
  const answered = outcomes.filter((o) => o.promptRetention !== null);
  const reached = (survived: boolean, o: QuestionOutcome) => (survived || within(o.rank, AVAILABILITY_RANK) ? 1 : 0);
  const answers = outcomes.flatMap((o) => (o.readable.answer === null ? [] : [o.readable.answer]));
  const tool = outcomes.flatMap((o) => (o.toolTokens === null ? [] : [o.toolTokens])).sort((a, b) => a - b);
  const retrieval = outcomes.flatMap((o) => (o.retrieval === null || o.adversarial ? [] : [o.retrieval]));
  return {
    questions: n,
    readableEvidence: mean((o) => o.readable.evidence),
    readableEvidencePrefix: mean((o) => o.readable.evidencePrefix),
    readableEvidenceAll: mean((o) => (o.readable.evidenceAll ? 1 : 0)),
    evidenceInPrompt: mean((o) => o.readable.evidenceInPrompt),
    evidenceInTool: mean((o) => o.readable.evidenceInTool),
    readableAnswer: answers.length === 0 ? null : answers.reduce((s, a) => s + a, 0) / answers.length,
    toolTokensMean: tool.length === 0 ? null : tool.reduce((s, t) => s + t, 0) / tool.length,
    toolTokensP90: tool.length === 0 ? null : tool[Math.min(tool.length - 1, Math.ceil(0.9 * tool.length) - 1)]!,
    retrieval: meanRetrieval(retrieval),
    retrievalQuestions: retrieval.length,
    survivalStrict: mean((o) => (o.strict ? 1 : 0)),
    survivalLenient: mean((o) => (o.lenient ? 1 : 0)),
    survivalVerbatim: mean((o) => (o.verbatim ? 1 : 0)),
    recallAt1: mean((o) => (within(o.rank, 1) ? 1 : 0)),
    recallAt5: mean((o) => (within(o.rank, 5) ? 1 : 0)),
    recallAt10: mean((o) => (within(o.rank, 10) ? 1 : 0)),
    mrr: mean((o) => (o.rank === null ? 0 : 1 / o.rank)),
    availability: mean((o) => reached(o.strict, o)),
    availabilityLenient: mean((o) => reached(o.lenient, o)),
    availabilityVerbatim: mean((o) => reached(o.verbatim, o)),
    answerRetention: retained.length === 0 ? null : retained.reduce((s, o) => s + o.retention!, 0) / retained.length,
    retentionMeasured: retained.length,
    answerInPrompt: answered.length === 0 ? null : answered.reduce((s, o) => s + o.promptRetention!, 0) / answered.length,
  };
}

/** The group the readable headline reads: questions with an answer when some are adversarial, else all. */
export const ANSWERABLE = 'non-adversarial';

/** The key of the headline group in an `aggregateByCategory` result. */
export function headlineGroup(metrics: Readonly<Record<string, QaMetrics>>): string {
  return ANSWERABLE in metrics ? ANSWERABLE : 'all';
}

/**
 * `all` first; then `non-adversarial` when some questions are adversarial (they have no answer, and the
 * headline is about reading one); then each category by name (a category named like a group gets `category `).
 */
export function aggregateByCategory(outcomes: readonly QuestionOutcome[]): Record<string, QaMetrics> {
  const adversarial = (o: QuestionOutcome) => o.adversarial;
  const categories = [...new Set(outcomes.map((o) => o.category))].sort();
  const name = (c: string) => (c === 'all' || c === ANSWERABLE ? `category ${c}` : c);
  const groups: Array<[string, QaMetrics]> = [['all', aggregate(outcomes)]];
  if (outcomes.some(adversarial)) groups.push([ANSWERABLE, aggregate(outcomes.filter((o) => !adversarial(o)))]);
  return Object.fromEntries([...groups, ...categories.map((c): [string, QaMetrics] => [name(c), aggregate(outcomes.filter((o) => o.category === c))])]);
}
