/**
 * How far the token estimates are from exact counts (gpt-4o, o200k_base) on real conversations: LoCoMo prose,
 * τ-bench airline traces (dialogue, tool-call JSON, JSON tool outputs) and SWE-agent traces (code in tool outputs).
 * Estimators: plain chars/4; chars/4 × 1.5, memfold's estimate before this version (and its summarizer-fed
 * calibration, not repeated here); memfold's estimate (`estimate-tokens.ts`); and that estimate calibrated per
 * conversation as `observeUsage` does it, on the exact count of the conversation's first half.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { NewMessage } from '../../src/conversation/types.js';
import { loadLocomo } from '../../src/eval/datasets/locomo.js';
import { loadTauBench } from '../../src/eval/datasets/tau-bench.js';
import { createTokenCounter, MESSAGE_OVERHEAD_TOKENS } from '../../src/tokens/create-token-counter.js';
import { countWith, getEncoder } from '../../src/tokens/encodings.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';
import { calibrated, calibrationFactor } from '../../src/tokens/usage-calibration.js';
import { fmt, mean, pct, percentile, sized, table, type BenchOptions, type BenchResult } from './bench-kit.js';
import { SHARED_DATA } from '../support/shared-data.js';

const DATA = SHARED_DATA;
const EXACT_MODEL = 'gpt-4o';

type Kind = 'prose' | 'system prompt' | 'tool call JSON' | 'tool output';

function kindOf(message: NewMessage): Kind | undefined {
  if (message.role === 'tool') return 'tool output';
  if (message.toolCalls && message.toolCalls.length > 0) return 'tool call JSON';
  if (message.role === 'system') return 'system prompt';
  return message.content.trim() === '' ? undefined : 'prose';
}

/** SWE-agent trajectories: `history` messages, with OpenAI-style tool calls. */
function loadSweAgent(dir: string): NewMessage[][] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.traj'))
    .map((file) =>
      (JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as { history: Array<Record<string, unknown>> }).history.map((m): NewMessage => {
        const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
        const calls = m.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }> | undefined;
        const message: NewMessage = { role: m.role as NewMessage['role'], content };
        if (calls && calls.length > 0) message.toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: c.function }));
        return message;
      }),
    );
}

/** chars/4 × 1.5 with exact tool-call JSON: memfold's estimate before any usage, up to this version. */
function previousEstimate(): TokenCounter {
  const json = getEncoder('o200k_base');
  const count = (text: string) => (text === '' ? 0 : Math.ceil((text.length / 4) * 1.5));
  return {
    exact: false,
    count,
    countMessage: (m) =>
      MESSAGE_OVERHEAD_TOKENS +
      count(m.content) +
      count(m.name ?? '') +
      count(m.toolCallId ?? '') +
      (m.toolCalls?.length ? countWith(json, JSON.stringify(m.toolCalls)) : 0),
  };
}

/** The counter calibrated as `observeUsage` would be after a request built from the first half of `conversation`. */
function calibratedOn(conversation: readonly NewMessage[], estimate: TokenCounter, exact: TokenCounter): TokenCounter {
  const half = conversation.slice(0, Math.max(1, Math.floor(conversation.length / 2)));
  const sum = (counter: TokenCounter) => half.reduce((total, m) => total + counter.countMessage(m), 0);
  const factor = calibrationFactor(sum(exact), sum(estimate));
  return { exact: false, count: (text) => calibrated(estimate.count(text), factor), countMessage: (m) => calibrated(estimate.countMessage(m), factor) };
}

interface ErrorStats {
  n: number;
  /** Σ estimate / Σ exact − 1: the error of the total. */
  total: number;
  meanAbs: number;
  p95Abs: number;
  /** Signed mean of (estimate − exact) / exact per unit. */
  bias: number;
}

interface Row {
  dataset: string;
  unit: string;
  exactTokens: number;
  estimators: Record<string, ErrorStats>;
}

type Estimators = Record<string, (conversation: readonly NewMessage[]) => TokenCounter>;

/** Tokens of a message without the fixed per-message overhead (the same for every counter). */
const tokensOf = (counter: TokenCounter, message: NewMessage) => counter.countMessage(message) - MESSAGE_OVERHEAD_TOKENS;

function evaluate(dataset: string, conversations: readonly NewMessage[][], exact: TokenCounter, estimators: Estimators): Row[] {
  const names = Object.keys(estimators);
  const units = new Map<string, { exact: number[]; estimates: Record<string, number[]> }>();
  const add = (unit: string, exactTokens: number, estimate: (name: string) => number) => {
    if (exactTokens <= 0) return;
    let u = units.get(unit);
    if (!u) units.set(unit, (u = { exact: [], estimates: Object.fromEntries(names.map((name) => [name, []])) }));
    u.exact.push(exactTokens);
    for (const name of names) u.estimates[name]!.push(estimate(name));
  };
  for (const conversation of conversations) {
    const counters = Object.fromEntries(names.map((name) => [name, estimators[name]!(conversation)]));
    const evaluated = conversation.filter((m) => kindOf(m) !== undefined);
    for (const message of evaluated) add(kindOf(message)!, tokensOf(exact, message), (name) => tokensOf(counters[name]!, message));
    // What compaction decisions use: the sum over a whole conversation, overhead included.
    const sum = (counter: TokenCounter) => evaluated.reduce((total, m) => total + counter.countMessage(m), 0);
    add('whole conversation', sum(exact), (name) => sum(counters[name]!));
  }
  const order = ['prose', 'system prompt', 'tool call JSON', 'tool output', 'whole conversation'];
  return [...units]
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .map(([unit, u]) => {
      const exactTotal = u.exact.reduce((a, b) => a + b, 0);
      const stats = (estimates: number[]): ErrorStats => {
        const errors = estimates.map((e, i) => (e - u.exact[i]!) / u.exact[i]!);
        const abs = errors.map(Math.abs);
        return {
          n: errors.length,
          total: estimates.reduce((a, b) => a + b, 0) / exactTotal - 1,
          meanAbs: mean(abs),
          p95Abs: percentile(abs, 95),
          bias: mean(errors),
        };
      };
      return { dataset, unit, exactTokens: exactTotal, estimators: Object.fromEntries(Object.entries(u.estimates).map(([name, e]) => [name, stats(e)])) };
    });
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const exact = createTokenCounter({ model: EXACT_MODEL });
  const estimate = createTokenCounter();
  const estimators: Estimators = {
    'chars/4': () => createTokenCounter({ mode: 'chars4' }),
    'chars/4 × 1.5 (before)': () => previousEstimate(),
    memfold: () => estimate,
    'memfold, observeUsage': (conversation) => calibratedOn(conversation, estimate, exact),
  };
  // A smoke run takes the first conversation of each dataset.
  const take = sized(options, { smoke: 1, quick: undefined, full: undefined });
  const datasets = {
    LoCoMo: (await loadLocomo(`${DATA}locomo/locomo10.json`)).map((c) => c.messages).slice(0, take),
    'τ-bench airline': (await loadTauBench(`${DATA}agent-traces/tau-bench/gpt-4o-airline.json`)).map((r) => r.messages).slice(0, take),
    'SWE-agent': loadSweAgent(`${DATA}agent-traces/swe-agent`).slice(0, take),
  };
  const rows: Row[] = [];
  for (const [dataset, conversations] of Object.entries(datasets)) {
    options.log(`${dataset}: ${conversations.length} conversations`);
    rows.push(...evaluate(dataset, conversations, exact, estimators));
  }

  const names = Object.keys(estimators);
  const sign = (x: number) => `${x >= 0 ? '+' : ''}${pct(x)}`;
  const cell = (s: ErrorStats) => `${sign(s.total)} · ${pct(s.meanAbs)} / ${pct(s.p95Abs)}`;
  const markdown = [
    `Error of each estimate against the exact ${EXACT_MODEL} count (o200k_base), per message (the fixed ${MESSAGE_OVERHEAD_TOKENS}-token message overhead left out) and per whole conversation (every evaluated message, overhead included). Cells: error of the total (Σ estimate / Σ exact − 1) · mean |error| / p95 |error| per unit. "memfold, observeUsage": the estimate times one conversation's factor, clamped to [1, 5], from the exact count of the conversation's first half, as \`observeUsage\` sets it. The earlier estimate counts tool-call JSON with o200k_base; memfold estimates it like any other text (no tokenizer loads when the model is unknown).`,
    '',
    table(
      ['dataset', 'unit', '>n', '>exact tokens', ...names.map((name) => `>${name}`)],
      rows.map((r) => [r.dataset, r.unit, fmt(r.estimators[names[0]!]!.n), fmt(r.exactTokens), ...names.map((name) => cell(r.estimators[name]!))]),
    ),
  ].join('\n');
  return { name: 'token-estimation', title: 'Token estimation against exact counts', markdown, json: { exactModel: EXACT_MODEL, rows } };
}
