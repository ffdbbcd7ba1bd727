/**
 * How far the token estimates are from exact counts (gpt-4o, o200k_base) on real conversations:
 * LoCoMo prose and τ-bench airline traces (dialogue, tool-call JSON, tool outputs).
 * Estimators: plain chars/4; memfold's estimator before any usage (factor 1.5); and the same estimator
 * calibrated the way production calibrates it: by the usage of its first summarizer request (the first
 * chunk of the first conversation), then evaluated on every other conversation of the dataset.
 */
import type { ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/compaction/compaction-settings.js';
import { chunkByTokens } from '../../src/compaction/chunk.js';
import { buildFoldRequest, DEFAULT_SUMMARIZATION_PROMPT, interpolatePrompt } from '../../src/openai/openai-prompt.js';
import { renderTranscript } from '../../src/compaction/transcript-format.js';
import { loadLocomo } from '../../src/eval/datasets/locomo.js';
import { loadTauBench } from '../../src/eval/datasets/tau-bench.js';
import { createTokenCounter, MESSAGE_OVERHEAD_TOKENS } from '../../src/tokens/create-token-counter.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';
import { fmt, mean, pct, percentile, table, type BenchOptions, type BenchResult } from './bench-kit.js';

const DATA = new URL('../../../shared/data/', import.meta.url).pathname;
const EXACT_MODEL = 'gpt-4o';

type Kind = 'prose' | 'tool call JSON' | 'tool output';

function kindOf(message: NewMessage): Kind | undefined {
  if (message.role === 'tool') return 'tool output';
  if (message.toolCalls && message.toolCalls.length > 0) return 'tool call JSON';
  if ((message.role === 'user' || message.role === 'assistant') && message.content.trim() !== '') return 'prose';
  return undefined; // system prompts and empty turns
}

function asStored(messages: readonly NewMessage[], conversationId: string): ConversationMessage[] {
  return messages.map((m, i) => ({ ...m, id: `m${i}`, conversationId, seq: i + 1, createdAt: String(m.createdAt ?? new Date(0).toISOString()) }));
}

/** Tokens of a message without the fixed per-message overhead (the same for every counter). */
const tokensOf = (counter: TokenCounter, message: NewMessage) => counter.countMessage(message) - MESSAGE_OVERHEAD_TOKENS;

/**
 * An estimator calibrated as fold.ts does it: observe(request text, the request's prompt tokens). The usage
 * is what the API would report for the first fold request of `conversation`: system + user message, exactly
 * counted, plus the chat format's per-message overhead.
 */
function calibrated(conversation: readonly NewMessage[], exact: TokenCounter): { counter: TokenCounter; factor: number; requestTokens: number } {
  const counter = createTokenCounter();
  const body = asStored(
    conversation.filter((m) => m.role !== 'system'),
    'calibration',
  );
  const [first] = chunkByTokens(body, DEFAULT_COMPACTION_SETTINGS.chunkTokens, (m) => counter.countMessage(m));
  const system = interpolatePrompt(DEFAULT_SUMMARIZATION_PROMPT, { maxTokens: DEFAULT_COMPACTION_SETTINGS.maxSummaryTokens });
  const user = buildFoldRequest(renderTranscript(first ?? []), undefined);
  const requestTokens = exact.count(system) + exact.count(user) + 2 * MESSAGE_OVERHEAD_TOKENS;
  counter.observe(system + user, requestTokens);
  return { counter, factor: requestTokens / ((system + user).length / 4), requestTokens };
}

interface ErrorStats {
  n: number;
  /** Signed mean of (estimate - exact) / exact: the bias. */
  bias: number;
  meanAbs: number;
  p95Abs: number;
}

function stats(errors: readonly number[]): ErrorStats {
  const abs = errors.map(Math.abs);
  return { n: errors.length, bias: mean(errors), meanAbs: mean(abs), p95Abs: percentile(abs, 95) };
}

interface Row {
  dataset: string;
  unit: string;
  exactTokens: number;
  estimators: Record<string, ErrorStats>;
}

function evaluate(dataset: string, conversations: readonly NewMessage[][], exact: TokenCounter, estimators: Record<string, TokenCounter>): Row[] {
  const units = new Map<string, { exact: number[]; estimates: Record<string, number[]> }>();
  const add = (unit: string, exactTokens: number, estimate: (name: string) => number) => {
    if (exactTokens <= 0) return;
    let u = units.get(unit);
    if (!u) units.set(unit, (u = { exact: [], estimates: Object.fromEntries(Object.keys(estimators).map((name) => [name, []])) }));
    u.exact.push(exactTokens);
    for (const name of Object.keys(estimators)) u.estimates[name]!.push(estimate(name));
  };
  for (const conversation of conversations) {
    const evaluated = conversation.filter((m) => kindOf(m) !== undefined);
    for (const message of evaluated) add(kindOf(message)!, tokensOf(exact, message), (name) => tokensOf(estimators[name]!, message));
    // What compaction decisions use: the sum over a whole conversation.
    const sum = (counter: TokenCounter) => evaluated.reduce((total, m) => total + counter.countMessage(m), 0);
    add('whole conversation', sum(exact), (name) => sum(estimators[name]!));
  }
  const order = ['prose', 'tool call JSON', 'tool output', 'whole conversation'];
  return [...units]
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .map(([unit, u]) => ({
      dataset,
      unit,
      exactTokens: u.exact.reduce((a, b) => a + b, 0),
      estimators: Object.fromEntries(
        Object.entries(u.estimates).map(([name, estimates]) => [name, stats(estimates.map((e, i) => (e - u.exact[i]!) / u.exact[i]!))]),
      ),
    }));
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const exact = createTokenCounter({ model: EXACT_MODEL });
  const datasets = {
    LoCoMo: (await loadLocomo(`${DATA}locomo/locomo10.json`)).map((c) => c.messages),
    'τ-bench airline': (await loadTauBench(`${DATA}agent-traces/tau-bench/gpt-4o-airline.json`)).map((r) => r.messages),
  };
  const rows: Row[] = [];
  const calibrations: Record<string, { factor: number; requestTokens: number }> = {};
  for (const [dataset, conversations] of Object.entries(datasets)) {
    const [first, ...rest] = conversations;
    const { counter, factor, requestTokens } = calibrated(first!, exact);
    calibrations[dataset] = { factor, requestTokens };
    options.log(`${dataset}: calibrated on a ${fmt(requestTokens)}-token request, factor ${fmt(factor, 3)}; ${rest.length} conversations evaluated`);
    rows.push(
      ...evaluate(dataset, rest, exact, {
        'chars/4': createTokenCounter({ mode: 'chars4' }),
        'before usage (x1.5)': createTokenCounter(),
        calibrated: counter,
      }),
    );
  }

  const names = Object.keys(rows[0]!.estimators);
  const cell = (s: ErrorStats) => `${pct(s.meanAbs)} / ${pct(s.p95Abs)} / ${s.bias >= 0 ? '+' : ''}${pct(s.bias)}`;
  const markdown = [
    `Relative error of each estimate against the exact ${EXACT_MODEL} count (o200k_base), per message (the fixed ${MESSAGE_OVERHEAD_TOKENS}-token message overhead left out) and per whole conversation (every evaluated message, overhead included). Cells: mean |error| / p95 |error| / mean signed error. Calibration: one observed usage, the first summarizer request of the dataset's first conversation, which is then left out of the evaluation. memfold's estimator counts tool-call JSON with o200k_base (see src/tokens/README.md): only the text beside the calls is estimated.`,
    '',
    table(
      ['dataset', 'unit', '>n', '>exact tokens', ...names.map((name) => `>${name}`)],
      rows.map((r) => [r.dataset, r.unit, fmt(r.estimators[names[0]!]!.n), fmt(r.exactTokens), ...names.map((name) => cell(r.estimators[name]!))]),
    ),
    '',
    `Calibration factors (exact tokens / (chars/4) of the first request; the estimator clamps them to [1, 5]): ${Object.entries(calibrations)
      .map(([d, c]) => `${d} ${fmt(c.factor, 3)}`)
      .join('; ')}.`,
  ].join('\n');
  return { name: 'token-estimation', title: 'Token estimation against exact counts', markdown, json: { exactModel: EXACT_MODEL, calibrations, rows } };
}
