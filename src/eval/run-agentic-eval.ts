/**
 * The agentic evaluation: replay tool-using runs (τ-bench) into memfold at each window and check that
 * no tool call is ever separated from its result, and that the values the task needs, first seen in
 * tool outputs, are still in the prompt or found by memory_read. The baselines cut the same runs.
 */
import type { ConversationMessage, NewMessage } from '../conversation/types.js';
import { cutToolOutput } from '../compaction/view/context-view.js';
import type { Memfold } from '../memfold.js';
import { baselinePrompt, baselineReuse, BASELINES, referenceTokens, type BaselineName } from './baselines.js';
import { assistantTurns, reuseTracker } from './cache-reuse.js';
import {
  aggregateRuns,
  messageText,
  splitPairs,
  toolPairs,
  valueQuery,
  valuesFromToolOutputs,
  type AgenticMetrics,
  type RunOutcome,
} from './agentic-metrics.js';
import { lostMessages } from './coverage.js';
import type { EvalStore } from './eval-store.js';
import { addCompaction, addReuse, costFigures, sumCosts, zeroCost, type CostFigures, type MethodCost } from './method-cost.js';
import { AVAILABILITY_RANK } from './metrics.js';
import { replayConversation } from './replay.js';
import { storeConversationId, withStoreIds } from './store-ids.js';
import type { AgenticRun } from './eval-types.js';

export interface AgenticMethodResult {
  window: number;
  method: 'memfold' | BaselineName;
  metrics: AgenticMetrics;
  cost: MethodCost;
  /** Prompt-cache reuse, compactions per 100k tokens appended, mean tokens freed: from `cost`. */
  figures: CostFigures;
  outcomes: RunOutcome[];
}

export interface AgenticEvalResult {
  dataset: string;
  windows: number[];
  runs: number;
  results: AgenticMethodResult[];
}

export interface AgenticEvalOptions {
  windows: readonly number[];
  store: EvalStore;
  onProgress?: (done: number, total: number, note: string) => void;
}

interface RunScore {
  outcome: RunOutcome;
  cost: MethodCost;
}

/** The prompt after each compaction: `history` was live once `appended` messages had been appended. */
interface Snapshot {
  appended: number;
  history: ConversationMessage[];
}

/** What the model saw just before message `at` was appended: the last compaction's history plus what followed. */
function promptBefore(at: number, snapshots: readonly Snapshot[], appended: readonly ConversationMessage[], maxLines: number): ConversationMessage[] {
  const last = snapshots.filter((s) => s.appended <= at).at(-1);
  const messages = last ? [...last.history, ...appended.slice(last.appended, at)] : appended.slice(0, at);
  return messages.map((m) => cutToolOutput(m, maxLines));
}

async function scoreMemfoldRun(memfold: Memfold, run: AgenticRun, window: number, tick: (note: string) => void): Promise<RunScore> {
  const storeId = storeConversationId(run.id, window);
  const messages = withStoreIds(storeId, run.messages);
  const pairs = toolPairs(messages);
  const split = new Set<number>();
  const checkpoint = (liveIds: ReadonlySet<string>, appended: number) => {
    for (const k of splitPairs(pairs, (i) => liveIds.has(messages[i]!.id!), appended)) split.add(k);
  };
  const snapshots: Snapshot[] = [];
  const cost = zeroCost();
  const reuse = reuseTracker(
    (m: ConversationMessage) => memfold.tokens.countMessage(m),
    (text: string) => memfold.tokens.count(text),
  );
  const started = performance.now();
  const stats = await replayConversation(memfold, storeId, messages, {
    stopOnFailure: false,
    onPrompt: (prompt) => reuse.add(prompt),
    onCompaction: (result, appended) => {
      addCompaction(cost, result);
      if (result.status === 'compacted') snapshots.push({ appended: appended.length, history: result.history });
      checkpoint(new Set(result.history.map((m) => m.id)), appended.length);
    },
    onProgress: () => tick(`${window} tokens, ${run.id}`),
  });
  cost.wallMs = performance.now() - started;
  addReuse(cost, reuse.total());

  const context = await memfold.context(storeId);
  checkpoint(new Set(context.map((m) => m.id)), messages.length);
  const summaries = await memfold.archive.list({ conversationId: storeId, kind: 'summary' });
  cost.promptTokens = context.reduce((s, m) => s + memfold.tokens.countMessage(m), 0);
  cost.rawTokens = stats.appended.reduce((s, m) => s + memfold.tokens.countMessage(m), 0);
  cost.lostMessages = lostMessages(stats.appended, context, summaries);
  const liveIds = new Set(context.map((m) => m.id));
  cost.compactedTokens = stats.appended.filter((m) => !liveIds.has(m.id)).reduce((s, m) => s + memfold.tokens.countMessage(m), 0);

  const maxLines = memfold.compactor.settings.toolOutputMaxLines;
  const values = [];
  const searchStarted = performance.now();
  for (const value of valuesFromToolOutputs(run.actions, run.messages)) {
    const promptText = promptBefore(value.neededAt, snapshots, stats.appended, maxLines).map(messageText).join('\n');
    // Searched in the final archive: anything archived after `neededAt` was still in the prompt then.
    const hits = await memfold.archive.search({ conversationId: storeId, query: valueQuery(value), limit: AVAILABILITY_RANK });
    values.push({ ...value, inPrompt: promptText.includes(value.value), viaMemory: hits.some((h) => h.entry.content.includes(value.value)) });
  }
  cost.searchMs = performance.now() - searchStarted;
  return { outcome: { runId: run.id, toolPairs: pairs.length, splitPairs: split.size, values }, cost };
}

/** A message as a plain prompt prints it: the unit the baselines count. */
function referenceLine(m: NewMessage): string {
  return `${m.role}: ${messageText(m)}`;
}

/**
 * A baseline cuts the messages before every request the agent makes (each assistant message) and at
 * the end; a pair split by any of those prompts counts as split.
 */
function scoreBaselineRun(run: AgenticRun, name: BaselineName, window: number): RunScore {
  const tokens = run.messages.map((m) => referenceTokens(referenceLine(m)));
  const promptBefore = (at: number) => baselinePrompt(name, tokens.slice(0, at), window);
  const pairs = toolPairs(run.messages);
  const split = new Set<number>();
  const requests = [...run.messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : [])), run.messages.length];
  for (const at of requests) {
    const kept = new Set(promptBefore(at).kept);
    for (const k of splitPairs(pairs, (i) => kept.has(i), at)) split.add(k);
  }
  const values = valuesFromToolOutputs(run.actions, run.messages).map((v) => {
    const promptText = promptBefore(v.neededAt)
      .kept.map((i) => messageText(run.messages[i]!))
      .join('\n');
    return { ...v, inPrompt: promptText.includes(v.value), viaMemory: false };
  });
  const final = promptBefore(run.messages.length);
  const cost = { ...zeroCost(), promptTokens: final.promptTokens, rawTokens: tokens.reduce((s, t) => s + t, 0), overWindow: final.fits ? 0 : 1 };
  addReuse(cost, baselineReuse(name, tokens, window, assistantTurns(run.messages)));
  return { outcome: { runId: run.id, toolPairs: pairs.length, splitPairs: split.size, values }, cost };
}

function methodResult(window: number, method: AgenticMethodResult['method'], scores: readonly RunScore[]): AgenticMethodResult {
  const outcomes = scores.map((s) => s.outcome);
  const cost = sumCosts(scores.map((s) => s.cost));
  return { window, method, metrics: aggregateRuns(outcomes), cost, figures: costFigures(cost, method === 'memfold'), outcomes };
}

export async function runAgenticEval(name: string, runs: readonly AgenticRun[], options: AgenticEvalOptions): Promise<AgenticEvalResult> {
  const total = runs.reduce((n, r) => n + r.messages.length, 0) * options.windows.length;
  let done = 0;
  const tick = (note: string) => options.onProgress?.(++done, total, note);
  const results: AgenticMethodResult[] = [];
  for (const window of options.windows) {
    const memfold = await options.store.memfoldFor(window);
    const scores: RunScore[] = [];
    for (const run of runs) scores.push(await scoreMemfoldRun(memfold, run, window, tick));
    results.push(methodResult(window, 'memfold', scores));
    for (const baseline of BASELINES)
      results.push(
        methodResult(
          window,
          baseline,
          runs.map((run) => scoreBaselineRun(run, baseline, window)),
        ),
      );
  }
  return { dataset: name, windows: [...options.windows], runs: runs.length, results };
}
