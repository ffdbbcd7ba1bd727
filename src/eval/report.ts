/** Markdown tables of an evaluation, for the terminal and report.md. Pure. */
import type { AgenticEvalResult } from './run-agentic-eval.js';
import { costFigures, type MethodCost } from './method-cost.js';
import { headlineGroup, type QaMetrics } from './metrics.js';
import { RETRIEVAL_BASELINES, type QaEvalResult } from './run-qa-eval.js';
import { RETRIEVAL_KS } from './retrieval-metrics.js';

const share = (value: number | null | undefined) => (value === null || value === undefined ? '—' : value.toFixed(2));
const seconds = (ms: number) => (ms / 1000).toFixed(1);
const count = (n: number) => n.toLocaleString('en-US');
/** Dollars to 4 decimals, with the compactions left out for want of a price. */
const usd = (cost: MethodCost) => `$${cost.summarizerUsd.toFixed(4)}${cost.unpricedCompactions > 0 ? ` (${count(cost.unpricedCompactions)} unpriced)` : ''}`;

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const align = header.map((_, i) => (i === 0 || (i === 1 && header[1] === 'method') ? '---' : '---:'));
  return [header, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function costRow(method: string, cost: MethodCost, usesModel: boolean): string[] {
  const dash = (text: string) => (usesModel ? text : '—');
  const perCompacted = cost.compactedTokens > 0 ? cost.summarizerInputTokens / cost.compactedTokens : 0;
  const figures = costFigures(cost, usesModel);
  return [
    method,
    share(cost.rawTokens === 0 ? 0 : cost.promptTokens / cost.rawTokens),
    count(cost.promptTokens),
    count(cost.rawTokens),
    dash(count(cost.summarizerInputTokens)),
    dash(count(cost.summarizerOutputTokens)),
    dash(usd(cost)),
    dash(perCompacted.toFixed(2)),
    dash(count(cost.modelCalls)),
    dash(`${count(cost.compactions)}${cost.failedCompactions ? ` (${cost.failedCompactions} failed)` : ''}`),
    dash(`${count(cost.clearingCompactions)} (${count(cost.toolOutputsCleared)} outputs, ${count(cost.tokensFreedByClearing)} tokens)`),
    dash(count(cost.lostMessages)),
    figures.promptCacheReuse === null ? '—' : figures.promptCacheReuse.toFixed(3),
    figures.compactionsPer100kTokens === null ? '—' : figures.compactionsPer100kTokens.toFixed(1),
    tokens(figures.meanTokensFreed),
    dash(seconds(cost.wallMs)),
    `${cost.overWindow}`,
  ];
}

const COST_HEADER = [
  'method',
  'prompt / raw',
  'prompt tokens',
  'raw tokens',
  'summarizer in',
  'summarizer out',
  'summarizer USD',
  'in per token compacted',
  'model calls',
  'compactions',
  'resolved by tier 2',
  'lost messages',
  'prompt cache reuse',
  'compactions per 100k appended',
  'mean tokens freed',
  'wall s',
  'over window',
];

const COST_NOTES = [
  "prompt cache reuse: over every request after a conversation's first (one before each assistant message), the tokens of the leading messages its prompt shares with the previous request's prompt (same role, name, content, tool calls and tool call id), summed, over the summed tokens of those prompts; counted with the prompt's own counter (memfold: its own; baselines: chars/4 of each message as they print it). A provider's cache works on tokens, so whole messages make this a lower bound. Its ceiling is below 1: a request's new messages are never cached. no-compaction reaches that ceiling while the conversation fits; beyond the window no request can be made, so those turns are not counted (— when none fits). the retrieval baselines (bm25-windows, bm25-sentences) build no prompt.",
  "compactions per 100k appended: compactions / tokens appended (raw tokens, memfold's counter) x 100,000.",
  "mean tokens freed: tokens before - tokens after of each compaction (its result's counts, the clip-archive included), averaged.",
  "summarizer USD: each compaction's `costUsd` (its summarizer tokens per model at memfold's price table, `src/cost/`), summed; the offline extractive summarizer, the eval's default, costs 0; compactions by a model without a price are counted beside it and left out of the sum.",
  'resolved by tier 2: compactions that cleared old tool outputs and stopped there, with no summarizer call; in brackets the tool outputs cleared and the tokens that freed, in every compaction.',
].join('\n');

function qaRow(category: string, method: string, m: QaMetrics, memory: boolean): string[] {
  const recall = (v: number) => (memory ? share(v) : '—');
  return [
    category,
    method,
    count(m.questions),
    share(m.survivalStrict),
    share(m.survivalLenient),
    share(m.survivalVerbatim),
    recall(m.recallAt1),
    recall(m.recallAt5),
    recall(m.recallAt10),
    recall(m.mrr),
    share(m.availability),
    share(m.availabilityVerbatim),
    share(m.answerRetention),
    share(m.answerInPrompt),
  ];
}

const tokens = (value: number | null) => (value === null ? '—' : count(Math.round(value)));

/** The prompt's size as a share of the window, averaged over conversations (retrieval alone has no prompt). */
export function promptShare(cost: MethodCost, window: number): number {
  return cost.conversations === 0 ? 0 : cost.promptTokens / (cost.conversations * window);
}

function readableRow(first: string, method: string, m: QaMetrics, cost?: MethodCost, window?: number): string[] {
  return [
    first,
    method,
    count(m.questions),
    share(m.readableEvidence),
    share(m.readableEvidencePrefix),
    share(m.readableEvidenceAll),
    share(m.evidenceInPrompt),
    share(m.evidenceInTool),
    share(m.readableAnswer),
    tokens(m.toolTokensMean),
    tokens(m.toolTokensP90),
    ...(cost && window ? [share(promptShare(cost, window))] : []),
  ];
}

const READABLE_HEADER = [
  'window',
  'method',
  'questions',
  'evidence readable',
  'first-120 probe',
  'every evidence turn',
  'in prompt',
  'in tool answer',
  'answer words readable',
  'tool tokens mean',
  'tool tokens p90',
  'prompt / window',
];

const QA_HEADER = [
  'category',
  'method',
  'questions',
  'survival strict',
  'lenient',
  'verbatim',
  'R@1',
  'R@5',
  'R@10',
  'MRR',
  'availability',
  'avail. verbatim',
  'answer in batches',
  'answer in prompt',
];

export function formatQaReport(result: QaEvalResult): string {
  const parts: string[] = [
    `## memfold eval: ${result.dataset}, ${result.conversations} conversations, ${count(result.questions)} questions`,
    '',
    `Skipped: ${result.skipped.withoutEvidence} questions without evidence, ${result.skipped.onlyMalformedEvidence} whose evidence is all malformed; ${result.skipped.malformedEvidence} malformed evidence entries dropped.`,
  ];
  const headline = headlineGroup(result.results[0]?.metrics ?? {});
  parts.push(
    '',
    `### What the model can read (${headline === 'all' ? 'all questions' : 'questions with an answer: adversarial ones left out'})`,
    '',
    table(
      READABLE_HEADER,
      result.results.map((r) => readableRow(count(r.window), r.method, r.metrics[headline]!, r.cost, r.window)),
    ),
  );
  for (const window of result.windows) {
    const here = result.results.filter((r) => r.window === window);
    const categories = Object.keys(here[0]?.metrics ?? {});
    const readable = categories.flatMap((category) => here.map((r) => readableRow(category, r.method, r.metrics[category]!)));
    const header = ['category', ...READABLE_HEADER.slice(1, -1)];
    parts.push('', `### Window ${count(window)} tokens: readable, by category`, '', table(header, readable));
  }
  parts.push('', READABLE_NOTES);
  const retrieval = retrievalSection(result, headline);
  if (retrieval) parts.push('', retrieval);
  for (const window of result.windows) {
    const here = result.results.filter((r) => r.window === window && !(RETRIEVAL_BASELINES as readonly string[]).includes(r.method));
    const categories = Object.keys(here[0]?.metrics ?? {});
    const rows = categories.flatMap((category) => here.map((r) => qaRow(category, r.method, r.metrics[category]!, r.method.startsWith('memfold'))));
    parts.push(
      '',
      `### Window ${count(window)} tokens: survival and recall (secondary: these credit summaries)`,
      '',
      table(QA_HEADER, rows),
      '',
      table(
        COST_HEADER,
        result.results.filter((r) => r.window === window).map((r) => costRow(r.method, r.cost, r.method.startsWith('memfold'))),
      ),
    );
  }
  if (result.windows.length > 1) {
    const methods = [...new Set(result.results.map((r) => r.method))];
    const availability = (method: string, window: number) => result.results.find((r) => r.method === method && r.window === window)?.metrics.all;
    parts.push(
      '',
      '### Availability by window (secondary: credits summaries; verbatim variant in parentheses)',
      '',
      table(
        ['method', ...result.windows.map((w) => count(w))],
        methods.map((method) => [
          method,
          ...result.windows.map((w) => {
            const m = availability(method, w);
            return m ? `${share(m.availability)} (${share(m.availabilityVerbatim)})` : '—';
          }),
        ]),
      ),
    );
  }
  parts.push('', QA_NOTES, COST_NOTES);
  return parts.join('\n');
}

const RETRIEVAL_KEYS = (['session', 'turn'] as const).flatMap((level) => RETRIEVAL_KS.flatMap((k) => [`${level} recall_all@${k}`, `${level} ndcg_any@${k}`]));

/** LongMemEval's retrieval metrics of each method with a tool answer, when the dataset gives targets. */
function retrievalSection(result: QaEvalResult, headline: string): string | undefined {
  const rows = result.results.flatMap((r) => {
    const m = r.metrics[headline];
    return m?.retrieval ? [[count(r.window), r.method, count(m.retrievalQuestions), ...RETRIEVAL_KEYS.map((key) => share(m.retrieval![key]))]] : [];
  });
  if (rows.length === 0) return undefined;
  return [
    "### LongMemEval's retrieval metrics of the tool answer (abstention questions left out)",
    '',
    table(['window', 'method', 'questions', ...RETRIEVAL_KEYS], rows),
    '',
    "As LongMemEval's retrieval code counts them: recall_all@k is 1 when every correct item is in the first k (also when there is none), ndcg_any@k its nDCG with binary relevance; the turn level ranks user turns, the correct ones marked has_answer in an answer session; the correct sessions are the answer sessions holding one (a question whose evidence is an assistant turn has none). A tool answer is text: an item ranks where it is first readable in it (session: its first readable turn, any role); items not readable are not retrieved.",
  ].join('\n');
}

const READABLE_NOTES = [
  "evidence readable: share of a question's evidence turns readable in the final prompt or in the memory_read answer to the question (asked with the question as query), averaged over questions: some 120-character stretch of the turn, starting at a word, appears verbatim (whitespace-normalized); a turn of 120 characters or fewer must appear whole. A summary of the turn earns nothing. first-120 probe: the same with the turn's first 120 characters (the earlier definition). every evidence turn: questions with all of them readable. in prompt / in tool answer: the same share in each alone.",
  "answer words readable: share of the answer's normalized tokens (lower case, no punctuation, no function words) present in the prompt or the tool answer.",
  "tool tokens: chars/4 of the memory_read answer. prompt / window: the final prompt's tokens over the window, averaged over conversations.",
  "bm25-windows: no prompt; BM25 over every raw message of the conversation, each scored with its neighbours' words, shown as ±1-message windows best first within the same token budget as memory_read. bm25-sentences: the same over sentences (Intl.Segmenter), each scored with its neighbours' words inside its message, shown with one neighbouring sentence of its message. truncate-oldest, head+tail, no-compaction: prompt only, no tool.",
].join('\n');

const QA_NOTES = [
  'Secondary columns. survival: every (strict) or any (lenient) evidence turn is verbatim in the final prompt or under a batch the clip-archive shows; verbatim: every evidence turn verbatim.',
  'R@k, MRR: memory_read with the question as query; a hit is a batch summarizing, or a transcript segment holding, an evidence turn. availability = survival + (1 - survival) x R@5.',
  'answer in batches: answer tokens kept by the depth-0 batches summarizing the evidence; answer in prompt: by the evidence turns the prompt holds and the shown batches covering them (adversarial questions skipped).',
  'Tokens are chars/4: memfold counts its prompt with its own counter (4 tokens a message, names, photo captions); the baselines count `speaker: text` per turn, as the data README does, and fill the whole window, while memfold compacts at 80% of it.',
].join('\n');

export function formatAgenticReport(result: AgenticEvalResult): string {
  const parts: string[] = [`## memfold eval: ${result.dataset}, ${result.runs} runs`];
  for (const window of result.windows) {
    const here = result.results.filter((r) => r.window === window);
    const rows = here.map((r) => [
      r.method,
      count(r.metrics.toolPairs),
      share(r.metrics.pairIntegrity),
      count(r.metrics.values),
      share(r.metrics.valueInPrompt),
      r.method === 'memfold' ? share(r.metrics.valueViaMemory) : '—',
      share(r.metrics.valueAvailability),
    ]);
    parts.push(
      '',
      `### Window ${count(window)} tokens`,
      '',
      table(['method', 'tool pairs', 'pair integrity', 'values', 'value in prompt', 'via memory_read', 'value availability'], rows),
      '',
      table(
        COST_HEADER,
        here.map((r) => costRow(r.method, r.cost, r.method === 'memfold')),
      ),
    );
  }
  parts.push(
    '',
    [
      'pair integrity: share of tool calls never separated from their result in any prompt (memfold: after every compaction; baselines: before every assistant turn). Must be 1.00 for memfold.',
      'values: arguments of the task\'s ground-truth actions that first appear in a tool output, judged in the prompt just before the agent passes them to a tool; memory_read is asked for the argument\'s name (e.g. "reservation id"), top 5.',
      COST_NOTES,
    ].join('\n'),
  );
  return parts.join('\n');
}
