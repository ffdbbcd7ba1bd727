/**
 * The question-answering evaluation: replay each conversation into memfold at each window, then ask
 * what the prompt holds and what memory_read returns for every question; score the baselines on the
 * same conversations. The I/O lives here; every count is done by the pure modules.
 */
import type { ConversationMessage } from '../conversation/types.js';
import { clipArchiveLabels } from '../compaction/view/clip-archive.js';
import type { Memfold } from '../memfold.js';
import { MEMORY_READ_DEFAULT_TOKENS } from '../tools/memory-read-args.js';
import type { ToolResult } from '../tools/memory-read.js';
import { BASELINES, type BaselineName } from './baselines.js';
import { batchCoverage, coveringBatches, hitCoverage, lostMessages, shownCoverage } from './coverage.js';
import type { EvalStore } from './eval-store.js';
import { reuseTracker } from './cache-reuse.js';
import { addCompaction, addReuse, costFigures, sumCosts, zeroCost, type CostFigures, type MethodCost } from './method-cost.js';
import type { EvalConversation, QaDataset, SkippedQuestions } from './eval-types.js';
import { aggregateByCategory, scoreQuestion, SEARCH_DEPTH, type QaMetrics, type QuestionOutcome } from './metrics.js';
import { replayConversation } from './replay.js';
import { storeConversationId, withStoreIds } from './store-ids.js';
import { evidenceIndexes, promptLine, scoreBaseline, scoreBm25Sentences, scoreBm25Windows } from './score-baselines.js';
import { conversationCorpus, questionRetrieval } from './retrieval-metrics.js';
import { readableView, toolTokens } from './readable.js';

/** The retrieval baselines: no prompt, an answer within memory_read's budget. */
export const RETRIEVAL_BASELINES = ['bm25-windows', 'bm25-sentences'] as const;
export type RetrievalBaselineName = (typeof RETRIEVAL_BASELINES)[number];

/** memfold; a memory_read variant scored on the same replay (`memfold:<name>`); the retrieval baselines; the prompt baselines. */
export type MethodName = 'memfold' | `memfold:${string}` | RetrievalBaselineName | BaselineName;

/** When a question is asked (the dataset's question date, when it gives one), for a variant that reads a clock. */
export interface AskedAt {
  at?: string;
}

/**
 * A memory_read to ask each question: memfold's own by default, or a variant to compare. memfold's memory_read
 * takes no clock; a variant may read `asked.at`.
 */
export type ReadToolFactory = (memfold: Memfold, conversationId: string) => { execute(args: unknown, asked?: AskedAt): Promise<ToolResult> };

export interface ReadVariant {
  name: string;
  tool: ReadToolFactory;
}

export interface MethodResult {
  window: number;
  method: MethodName;
  /** `all`, then each category. */
  metrics: Record<string, QaMetrics>;
  cost: MethodCost;
  /** Prompt-cache reuse, compactions per 100k tokens appended, mean tokens freed: from `cost`. */
  figures: CostFigures;
  outcomes: QuestionOutcome[];
}

export interface QaEvalResult {
  dataset: string;
  windows: number[];
  conversations: number;
  questions: number;
  skipped: SkippedQuestions;
  results: MethodResult[];
}

export interface QaEvalOptions {
  windows: readonly number[];
  store: EvalStore;
  /** Called as work advances: messages replayed plus questions asked, over all windows. */
  onProgress?: (done: number, total: number, note: string) => void;
  /** Other memory_read variants, each asked every question on the same replay and reported as `memfold:<name>`. */
  variants?: readonly ReadVariant[];
  /** Token budget of the retrieval baselines' answers; default memory_read's default. */
  baselineTokens?: number;
  /** Called after each conversation's replay and scoring at a window, its store still open (answer accuracy). */
  onReplayed?: (replayed: { memfold: Memfold; storeId: string; conversation: EvalConversation; window: number }) => Promise<void>;
}

interface ConversationScore {
  outcomes: QuestionOutcome[];
  cost: MethodCost;
}

const ownTool: ReadToolFactory = (memfold, conversationId) => memfold.memoryRead(conversationId);

/** What the model sees as one text: every context message, the clip-archive included. */
function promptText(context: readonly ConversationMessage[]): string {
  return context.map((m) => (m.kind === 'clip_archive' ? m.content : promptLine(m))).join('\n');
}

async function scoreMemfold(
  memfold: Memfold,
  conversation: EvalConversation,
  window: number,
  tick: (note: string) => void,
  variants: readonly ReadVariant[],
): Promise<{ own: ConversationScore; variants: ConversationScore[] }> {
  const storeId = storeConversationId(conversation.id, window);
  const messages = withStoreIds(storeId, conversation.messages);
  const cost = zeroCost();
  const reuse = reuseTracker(
    (m: ConversationMessage) => memfold.tokens.countMessage(m),
    (text: string) => memfold.tokens.count(text),
  );
  const started = performance.now();
  const stats = await replayConversation(memfold, storeId, messages, {
    stopOnFailure: false,
    onCompaction: (result) => addCompaction(cost, result),
    onPrompt: (prompt) => reuse.add(prompt),
    onProgress: () => tick(`${window} tokens, ${conversation.id}`),
  });
  cost.wallMs = performance.now() - started;
  addReuse(cost, reuse.total());

  const context = await memfold.context(storeId);
  const summaries = await memfold.archive.list({ conversationId: storeId, kind: 'summary' });
  const coverage = batchCoverage(summaries);
  const clip = context.find((m) => m.kind === 'clip_archive');
  const live = new Map(context.filter((m) => m.kind !== 'clip_archive').map((m) => [m.id, m]));
  const verbatim = new Set(live.keys());
  const shownLabels = clip ? clipArchiveLabels(clip.content) : [];
  const summarized = shownCoverage(shownLabels, coverage);
  const byLabel = new Map(summaries.map((b) => [b.label, b]));
  const count = (m: ConversationMessage) => memfold.tokens.countMessage(m);
  cost.promptTokens = context.reduce((s, m) => s + count(m), 0);
  cost.rawTokens = stats.appended.reduce((s, m) => s + count(m), 0);
  cost.lostMessages = lostMessages(stats.appended, context, summaries);
  const liveIds = new Set(context.map((m) => m.id));
  cost.compactedTokens = stats.appended.filter((m) => !liveIds.has(m.id)).reduce((s, m) => s + memfold.tokens.countMessage(m), 0);

  cost.conversations = 1;
  const prompt = readableView(promptText(context));
  const corpus = conversationCorpus(conversation);
  const readers = [{ name: 'memfold', tool: ownTool }, ...variants].map((v) => ({ tool: v.tool(memfold, storeId), outcomes: [] as QuestionOutcome[] }));
  const outcomes = readers[0]!.outcomes;
  const searchStarted = performance.now();
  for (const question of conversation.questions) {
    const indexes = evidenceIndexes(conversation, question);
    const evidenceIds = indexes.map((i) => messages[i]!.id!);
    const evidenceTexts = indexes.map((i) => messages[i]!.content);
    // The search memory_read runs for {query}: the question's own words, nothing else.
    const hits = await memfold.archive.search({ conversationId: storeId, query: question.question, limit: SEARCH_DEPTH });
    const covering = coveringBatches(summaries, evidenceIds);
    const shownCovering = shownLabels.filter((label) => evidenceIds.some((id) => coverage.get(label)?.has(id)));
    const aboutEvidence = [
      ...evidenceIds.flatMap((id) => (live.has(id) ? [promptLine(live.get(id)!)] : [])),
      ...shownCovering.map((label) => byLabel.get(label)?.content ?? ''),
    ].join('\n');
    for (const reader of readers) {
      // What the model gets back when it calls memory_read with the question as its query.
      const answer = await reader.tool.execute({ query: question.question }, question.askedAt ? { at: question.askedAt } : {});
      const view = readableView(answer.output);
      const retrieval = questionRetrieval(corpus, question, view);
      reader.outcomes.push(
        scoreQuestion({
          conversationId: conversation.id,
          question,
          evidenceIds,
          verbatim,
          summarized,
          promptText: aboutEvidence,
          hits: hits.map((hit) => hitCoverage(hit.entry, coverage)),
          ...(covering.length > 0 ? { coveringText: covering.map((b) => b.content).join('\n') } : {}),
          evidenceTexts,
          prompt,
          tool: { view, tokens: toolTokens(answer.output) },
          ...(retrieval ? { retrieval } : {}),
        }),
      );
    }
    tick(`${window} tokens, ${conversation.id}, questions`);
  }
  cost.searchMs = performance.now() - searchStarted;
  return { own: { outcomes, cost }, variants: readers.slice(1).map((r) => ({ outcomes: r.outcomes, cost: { ...cost } })) };
}

function methodResult(window: number, method: MethodName, scores: readonly ConversationScore[]): MethodResult {
  const cost = sumCosts(scores.map((s) => s.cost));
  const outcomes = scores.flatMap((s) => s.outcomes);
  return { window, method, metrics: aggregateByCategory(outcomes), cost, figures: costFigures(cost, method.startsWith('memfold')), outcomes };
}

function baselineScores(conversations: readonly EvalConversation[], name: BaselineName, window: number): ConversationScore[] {
  return conversations.map((conversation) => {
    const score = scoreBaseline(conversation, name, window);
    return {
      outcomes: score.outcomes,
      cost: {
        ...zeroCost(),
        conversations: 1,
        promptTokens: score.promptTokens,
        rawTokens: score.rawTokens,
        overWindow: score.fits ? 0 : 1,
        reusedPromptTokens: score.reuse.reusedTokens,
        comparedPromptTokens: score.reuse.promptTokens,
      },
    };
  });
}

function retrievalBaselineScores(conversations: readonly EvalConversation[], name: RetrievalBaselineName, budget: number): ConversationScore[] {
  const scoreOne = name === 'bm25-windows' ? scoreBm25Windows : scoreBm25Sentences;
  return conversations.map((conversation) => {
    const score = scoreOne(conversation, budget);
    return { outcomes: score.outcomes, cost: { ...zeroCost(), conversations: 1, rawTokens: score.rawTokens } };
  });
}

export async function runQaEval(dataset: QaDataset, options: QaEvalOptions): Promise<QaEvalResult> {
  const { conversations } = dataset;
  const perWindow = conversations.reduce((n, c) => n + c.messages.length + c.questions.length, 0);
  const total = perWindow * options.windows.length;
  let done = 0;
  const tick = (note: string) => options.onProgress?.(++done, total, note);
  const results: MethodResult[] = [];
  for (const window of options.windows) {
    const memfold = await options.store.memfoldFor(window);
    const variants = options.variants ?? [];
    const scores: ConversationScore[] = [];
    const variantScores: ConversationScore[][] = variants.map(() => []);
    for (const conversation of conversations) {
      const scored = await scoreMemfold(memfold, conversation, window, tick, variants);
      await options.onReplayed?.({ memfold, storeId: storeConversationId(conversation.id, window), conversation, window });
      scores.push(scored.own);
      scored.variants.forEach((score, i) => variantScores[i]!.push(score));
    }
    results.push(methodResult(window, 'memfold', scores));
    variants.forEach((variant, i) => results.push(methodResult(window, `memfold:${variant.name}`, variantScores[i]!)));
    for (const name of RETRIEVAL_BASELINES)
      results.push(methodResult(window, name, retrievalBaselineScores(conversations, name, options.baselineTokens ?? MEMORY_READ_DEFAULT_TOKENS)));
    for (const name of BASELINES) results.push(methodResult(window, name, baselineScores(conversations, name, window)));
  }
  return {
    dataset: dataset.name,
    windows: [...options.windows],
    conversations: conversations.length,
    questions: conversations.reduce((n, c) => n + c.questions.length, 0),
    skipped: dataset.skipped,
    results,
  };
}
