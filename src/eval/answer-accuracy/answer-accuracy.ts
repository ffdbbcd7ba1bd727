/**
 * End-to-end answer accuracy: an answer model answers each question from what each method gives it, a judge model
 * grades the answer, and the accuracy is reported per category with the tokens and dollars both models took.
 * Methods: `memfold` (its `context()` after the replay at each window, with memory_read), `truncate-oldest` at the
 * same window (the newest whole messages), and `full-context` (the whole conversation when it fits the answer
 * model's window, else its newest messages that do), all answered by the same model.
 */
import PQueue from 'p-queue';
import type OpenAI from 'openai';
import { costOf } from '../../cost/cost-of.js';
import { DEFAULT_PRICES, PRICES_AS_OF } from '../../cost/default-prices.js';
import type { PriceTable } from '../../cost/model-price.js';
import type { Memfold } from '../../memfold.js';
import { createModelQueue } from '../../openai/openai-queue.js';
import type { RetryOverrides } from '../../openai/openai-queued-retry.js';
import type { EvalConversation, EvalQuestion } from '../eval-types.js';
import { answerAndJudge, ANSWER_MAX_TOKENS, type ReadTool, type ToolCallRecord } from './answer-question.js';
import { judgeRuleOf, MAX_TOOL_CALLS, type JudgeRule } from './answer-prompts.js';
import { addTally, createChatEndpoint, emptyTally, type EndpointSettings, type UsageTally } from './chat-endpoint.js';
import { datedChatMessages, truncatedHistory } from './history-messages.js';

export type AnswerMethod = 'memfold' | 'truncate-oldest' | 'full-context';

/** Tokens of the answer model's window kept for the system prompt, the question and the answer (full-context). */
export const ANSWER_RESERVE_TOKENS = ANSWER_MAX_TOKENS + 1_000;
export const DEFAULT_ANSWER_WINDOW = 128_000;

export interface AnswerAccuracyOptions {
  answer: EndpointSettings;
  judge: EndpointSettings;
  /** Tokens the answer model accepts (full-context cuts the oldest messages beyond it). Default 128,000. */
  answerWindow?: number;
  /** Per attempt, retries after the first, overall per call, calls in flight (both models together). */
  limits: { timeoutMs: number; maxRetries: number; deadlineMs: number; concurrency: number };
  /** Default memfold's table (`src/cost/`). */
  prices?: PriceTable;
  retry?: RetryOverrides;
  /** Called as each question of a method is answered and judged (progress). */
  onAnswered?: () => void;
}

export interface AnswerRecord {
  method: AnswerMethod;
  window: number;
  conversationId: string;
  questionId: string;
  category: string;
  rule: JudgeRule;
  question: string;
  reference?: string;
  answer: string;
  correct: boolean;
  verdict: string;
  toolCalls: ToolCallRecord[];
  error?: string;
}

export interface CategoryAccuracy {
  questions: number;
  correct: number;
  accuracy: number;
  /** Questions with no answer or no verdict (the endpoint failed): counted as wrong. */
  failed: number;
}

export interface AnswerMethodResult {
  method: AnswerMethod;
  /** The eval window; full-context: the answer model's. */
  window: number;
  /** `all`, then each category (an abstention question under `abstention`). */
  accuracy: Record<string, CategoryAccuracy>;
  usage: { answer: UsageTally; judge: UsageTally };
  /** US dollars at `prices`; null for a model the table has no price for. */
  costUsd: { answer: number | null; judge: number | null; total: number | null };
  memoryReadCalls: number;
  /** Conversations whose oldest messages did not fit (truncate-oldest, full-context), and the messages left out. */
  cut: { conversations: number; messages: number };
}

export interface AnswerAccuracyResult {
  answerModel: string;
  judgeModel: string;
  answerWindow: number;
  maxToolCalls: number;
  pricesAsOf: string;
  results: AnswerMethodResult[];
  /** Both models over every method. */
  total: { usage: { answer: UsageTally; judge: UsageTally }; costUsd: { answer: number | null; judge: number | null; total: number | null } };
  answers: AnswerRecord[];
}

export interface AnswerAccuracyRun {
  /** Answers a conversation's questions from memfold, right after its replay at `window`. */
  onReplayed(replayed: { memfold: Memfold; storeId: string; conversation: EvalConversation; window: number }): Promise<void>;
  /** Answers from truncate-oldest (each window) and full-context (once), then sums it all up. */
  finish(conversations: readonly EvalConversation[], windows: readonly number[]): Promise<AnswerAccuracyResult>;
  /** Drops the questions not yet started and aborts the calls under way (the evaluation failed). */
  abandon(): void;
}

/** Questions with a reference to judge against, and abstentions (judged on declining). */
export const answerable = (q: EvalQuestion) => q.answer !== undefined || q.adversarial;
export const categoryKey = (q: EvalQuestion) => (q.adversarial ? 'abstention' : q.category);

interface Group {
  method: AnswerMethod;
  window: number;
  /** Each conversation's answers, in the order they were asked for (so results.json does not depend on timing). */
  pending: Array<Promise<AnswerRecord[]>>;
  usage: { answer: UsageTally; judge: UsageTally };
  cut: { conversations: number; messages: number };
}

function accuracyOf(records: readonly AnswerRecord[]): Record<string, CategoryAccuracy> {
  const out: Record<string, CategoryAccuracy> = {};
  const add = (key: string, r: AnswerRecord) => {
    const c = out[key] ?? { questions: 0, correct: 0, accuracy: 0, failed: 0 };
    out[key] = c;
    c.questions++;
    if (r.correct) c.correct++;
    if (r.error) c.failed++;
  };
  for (const r of records) add('all', r);
  for (const r of [...records].sort((a, b) => a.category.localeCompare(b.category))) add(r.category, r);
  for (const c of Object.values(out)) c.accuracy = c.questions === 0 ? 0 : c.correct / c.questions;
  return out;
}

function costsOf(usage: { answer: UsageTally; judge: UsageTally }, models: { answer: string; judge: string }, prices: PriceTable) {
  const usd = (tally: UsageTally, model: string) => (tally.calls === 0 ? 0 : costOf(tally, model, prices).usd);
  const answer = usd(usage.answer, models.answer);
  const judge = usd(usage.judge, models.judge);
  return { answer, judge, total: answer === null || judge === null ? null : Math.round((answer + judge) * 1e10) / 1e10 };
}

/** Each method's accuracy and cost, and both models' totals, once every answer is in. */
function summarize(input: {
  answered: ReadonlyArray<{ group: Group; records: AnswerRecord[] }>;
  models: { answer: string; judge: string };
  answerWindow: number;
  prices: PriceTable;
}): AnswerAccuracyResult {
  const { answered, models, prices } = input;
  const results = answered.map(
    ({ group, records }): AnswerMethodResult => ({
      method: group.method,
      window: group.window,
      accuracy: accuracyOf(records),
      usage: group.usage,
      costUsd: costsOf(group.usage, models, prices),
      memoryReadCalls: records.reduce((n, r) => n + r.toolCalls.length, 0),
      cut: group.cut,
    }),
  );
  const usage = { answer: emptyTally(), judge: emptyTally() };
  for (const { group } of answered) {
    addTally(usage.answer, group.usage.answer);
    addTally(usage.judge, group.usage.judge);
  }
  return {
    answerModel: models.answer,
    judgeModel: models.judge,
    answerWindow: input.answerWindow,
    maxToolCalls: MAX_TOOL_CALLS,
    pricesAsOf: PRICES_AS_OF,
    results,
    total: { usage, costUsd: costsOf(usage, models, prices) },
    answers: answered.flatMap((a) => a.records),
  };
}

export function createAnswerAccuracy(options: AnswerAccuracyOptions): AnswerAccuracyRun {
  const queue = createModelQueue({ concurrency: options.limits.concurrency });
  const stop = new AbortController();
  const limits = { ...options.limits, queue, signal: stop.signal, ...(options.retry ? { retry: options.retry } : {}) };
  const answerer = createChatEndpoint(options.answer, limits);
  const judge = createChatEndpoint(options.judge, limits);
  const answerWindow = options.answerWindow ?? DEFAULT_ANSWER_WINDOW;
  const prices = options.prices ?? DEFAULT_PRICES;
  const groups = new Map<string, Group>();
  const groupOf = (method: AnswerMethod, window: number): Group => {
    const key = `${method}@${window}`;
    const group = groups.get(key) ?? {
      method,
      window,
      pending: [],
      usage: { answer: emptyTally(), judge: emptyTally() },
      cut: { conversations: 0, messages: 0 },
    };
    groups.set(key, group);
    return group;
  };
  // One queue of questions for the whole run: conversations are answered while the next ones replay, a few at once.
  const questions = new PQueue({ concurrency: options.limits.concurrency });

  /** Queues every answerable question of `conversation`, answered from `history` (and `tool`); returns at once. */
  function answerAll(group: Group, conversation: EvalConversation, history: OpenAI.Chat.ChatCompletionMessageParam[], tool?: ReadTool): void {
    const asked = conversation.questions.filter(answerable);
    const one = async (q: EvalQuestion): Promise<AnswerRecord> => {
      const judged = await answerAndJudge({ answerer, judge, history, question: q, usage: group.usage, ...(tool ? { tool } : {}) });
      const reference = q.answer !== undefined ? { reference: q.answer } : {};
      const about = { method: group.method, window: group.window, conversationId: conversation.id, questionId: q.id, question: q.question };
      options.onAnswered?.();
      return { ...about, category: categoryKey(q), rule: judgeRuleOf(q), ...reference, ...judged };
    };
    const answered = Promise.all(asked.map((q) => questions.add(() => one(q))));
    // `finish` awaits it; until then a failure (answerAndJudge records its own) must not surface as unhandled.
    answered.catch(() => undefined);
    group.pending.push(answered);
  }

  function fromBaseline(method: AnswerMethod, window: number, conversation: EvalConversation, budget: number): void {
    const group = groupOf(method, window);
    const history = truncatedHistory(conversation.messages, budget);
    if (history.dropped > 0) {
      group.cut.conversations++;
      group.cut.messages += history.dropped;
    }
    answerAll(group, conversation, history.messages);
  }

  return {
    async onReplayed({ memfold, storeId, conversation, window }) {
      const context = await memfold.context(storeId);
      answerAll(groupOf('memfold', window), conversation, datedChatMessages(context), memfold.memoryRead(storeId));
    },
    abandon() {
      questions.clear();
      stop.abort();
    },
    async finish(conversations, windows) {
      for (const window of windows) for (const c of conversations) fromBaseline('truncate-oldest', window, c, window);
      for (const c of conversations) fromBaseline('full-context', answerWindow, c, answerWindow - ANSWER_RESERVE_TOKENS);
      const answered = await Promise.all([...groups.values()].map(async (g) => ({ group: g, records: (await Promise.all(g.pending)).flat() })));
      return summarize({ answered, models: { answer: answerer.model, judge: judge.model }, answerWindow, prices });
    },
  };
}
