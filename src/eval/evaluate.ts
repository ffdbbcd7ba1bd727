/**
 * `memfold eval` as a library call: load a dataset, replay it into a fresh store at each window, score
 * memfold and the baselines, and write results.json, report.md and availability.svg.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CompactionSettings } from '../compaction/compaction-settings.js';
import { InvalidArgumentError } from '../errors.js';
import { answerable, createAnswerAccuracy, type AnswerAccuracyOptions, type AnswerAccuracyResult } from './answer-accuracy/answer-accuracy.js';
import { formatAnswerAccuracy } from './answer-accuracy/answer-report.js';
import { windowChart, type ChartSeries } from './chart.js';
import { loadJsonlDataset } from './datasets/jsonl-dataset.js';
import { loadLocomoDataset } from './datasets/locomo-dataset.js';
import { loadLongMemEvalDataset } from './datasets/longmemeval.js';
import { loadSweAgentRuns } from './datasets/swe-agent.js';
import { loadTauBench, tauBenchAgenticRuns } from './datasets/tau-bench.js';
import { openEvalStore, type EvalStore } from './eval-store.js';
import { formatAgenticReport, formatQaReport } from './report.js';
import { runAgenticEval, type AgenticEvalResult } from './run-agentic-eval.js';
import { runQaEval, type QaEvalResult, type ReadVariant } from './run-qa-eval.js';
import { SECOND_LOOK } from './second-look.js';

import type { DatasetKind } from './datasets/dataset-kinds.js';

export { DATASETS, type DatasetKind } from './datasets/dataset-kinds.js';
export const DEFAULT_WINDOWS: readonly number[] = [4_000, 8_000, 16_000];
export const DEFAULT_OUT_DIR = 'memfold-eval';

export interface EvaluateOptions {
  dataset: DatasetKind;
  file: string;
  /** The questions file of the `jsonl` format. */
  questions?: string;
  windows: readonly number[];
  /** Only the first N conversations (or runs). */
  conversations?: number;
  outDir: string;
  /** Folder for the fresh store, kept afterwards (it must be empty); default a temporary folder, removed. */
  home?: string;
  namespace?: string;
  env?: Record<string, string | undefined>;
  onProgress?: (done: number, total: number, note: string) => void;
  /** memory_read variants scored on the same replay beside memfold's own (the ablation in docs/memory-read.md). */
  variants?: readonly ReadVariant[];
  /** Score the second look beside one call (`memfold:second-look`: the question, then the page its answer suggests). Default true. */
  secondLook?: boolean;
  /** Compaction settings for memfold beside the window (`--session-scope`, `--keep-sessions`); recorded in results.json. */
  compaction?: Partial<CompactionSettings>;
  /** Also answer every question with a model and judge it (`--answer-model`, `--judge-model`): question datasets only. */
  answerAccuracy?: AnswerAccuracyOptions;
}

/** A question dataset's result, with the answer accuracy when it was asked for. */
export type QaEvaluation = QaEvalResult & { answerAccuracy?: AnswerAccuracyResult };

export interface EvaluateResult {
  result: QaEvaluation | AgenticEvalResult;
  markdown: string;
  files: { json: string; markdown: string; svg: string };
  /** memfold's promises held: no message lost, and (agentic) no tool call split from its result. */
  guaranteesHeld: boolean;
}

/** Parses `4000,8000,16000`; every window an integer >= 256 (memfold's smallest). */
export function parseWindows(text: string, field = '--windows'): number[] {
  const windows = text.split(',').map((part) => Number(part.trim()));
  if (windows.length === 0 || windows.some((w) => !Number.isInteger(w) || w < 256))
    throw new InvalidArgumentError(field, `must list integers >= 256, comma-separated (got "${text}")`);
  return [...new Set(windows)].sort((a, b) => a - b);
}

async function freshHome(home: string | undefined): Promise<{ home: string; remove: boolean }> {
  if (!home) return { home: await mkdtemp(path.join(os.tmpdir(), 'memfold-eval-')), remove: true };
  const entries = await readdir(home).catch(() => []);
  if (entries.length > 0)
    throw new InvalidArgumentError('--home', `must be a new or empty folder: the evaluation replays into a fresh store (${home} holds files)`);
  await mkdir(home, { recursive: true });
  return { home, remove: false };
}

export function qaChartSeries(result: QaEvalResult): ChartSeries[] {
  const methods = [...new Set(result.results.map((r) => r.method))];
  const series: ChartSeries[] = methods.map((method) => ({
    name: method,
    points: result.results.filter((r) => r.method === method).map((r) => ({ window: r.window, value: r.metrics.all!.availability })),
  }));
  // Survival credits a summary that covers the evidence; this variant credits only verbatim turns.
  const memfold = result.results.filter((r) => r.method === 'memfold');
  series.splice(1, 0, {
    name: 'memfold (verbatim)',
    dashed: true,
    points: memfold.map((r) => ({ window: r.window, value: r.metrics.all!.availabilityVerbatim })),
  });
  return series;
}

export function agenticChartSeries(result: AgenticEvalResult): ChartSeries[] {
  const methods = [...new Set(result.results.map((r) => r.method))];
  return methods.map((method) => ({
    name: method,
    points: result.results.filter((r) => r.method === method).map((r) => ({ window: r.window, value: r.metrics.valueAvailability })),
  }));
}

interface Evaluated {
  result: QaEvaluation | AgenticEvalResult;
  markdown: string;
  svg: string;
  guaranteesHeld: boolean;
}

async function loadQaDataset(options: EvaluateOptions) {
  if (options.dataset === 'jsonl' && !options.questions) throw new InvalidArgumentError('--questions', 'is required with --dataset jsonl');
  if (options.dataset === 'locomo') return loadLocomoDataset(options.file);
  if (options.dataset === 'longmemeval')
    return loadLongMemEvalDataset(options.file, options.conversations === undefined ? {} : { limit: options.conversations });
  return loadJsonlDataset(options.file, options.questions!);
}

/**
 * A question dataset: the replay and its scores, and with `answerAccuracy` the answers, asked while the replay goes on.
 * Progress counts messages replayed and questions scored, then each answer judged (one per question and method).
 */
async function evaluateQa(options: EvaluateOptions, run: { windows: readonly number[]; store: EvalStore }, limit: <T>(items: T[]) => T[]): Promise<Evaluated> {
  const dataset = await loadQaDataset(options);
  const conversations = limit(dataset.conversations);
  const asked = conversations.reduce((n, c) => n + c.questions.filter(answerable).length, 0);
  const answerTotal = options.answerAccuracy ? asked * (2 * options.windows.length + 1) : 0;
  const counts = { replayed: 0, replayTotal: 0, answered: 0 };
  // Answers start once a conversation is replayed, so the replay's total is known before the first one.
  const report = (note: string) => counts.replayTotal > 0 && options.onProgress?.(counts.replayed + counts.answered, counts.replayTotal + answerTotal, note);
  const onAnswered = () => {
    counts.answered++;
    report('answers');
  };
  const answers = options.answerAccuracy ? createAnswerAccuracy({ ...options.answerAccuracy, onAnswered }) : undefined;
  try {
    const qa = await runQaEval(
      { ...dataset, conversations },
      {
        ...run,
        variants: [...(options.secondLook === false ? [] : [SECOND_LOOK]), ...(options.variants ?? [])],
        onProgress: (done, total, note) => {
          Object.assign(counts, { replayed: done, replayTotal: total });
          report(note);
        },
        ...(answers ? { onReplayed: answers.onReplayed } : {}),
      },
    );
    const answerAccuracy = await answers?.finish(conversations, options.windows);
    return {
      result: answerAccuracy ? { ...qa, answerAccuracy } : qa,
      markdown: formatQaReport(qa) + (answerAccuracy ? `\n\n${formatAnswerAccuracy(answerAccuracy)}` : ''),
      svg: windowChart(qaChartSeries(qa), { title: `${qa.dataset}: evidence available (in the prompt, or memory_read top 5)`, yLabel: 'availability' }),
      guaranteesHeld: qa.results.every((r) => r.method !== 'memfold' || r.cost.lostMessages === 0),
    };
  } catch (error) {
    answers?.abandon();
    throw error;
  }
}

export async function evaluate(options: EvaluateOptions): Promise<EvaluateResult> {
  const limit = <T>(items: T[]) => (options.conversations === undefined ? items : items.slice(0, options.conversations));
  const agentic = options.dataset === 'tau-bench' || options.dataset === 'swe-agent';
  if (agentic && options.answerAccuracy) throw new InvalidArgumentError('--answer-model', 'answers questions: use it with locomo, longmemeval or jsonl');
  const { home, remove } = await freshHome(options.home);
  const store = openEvalStore({
    home,
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.compaction ? { compaction: options.compaction } : {}),
  });
  const run = { windows: options.windows, store, ...(options.onProgress ? { onProgress: options.onProgress } : {}) };
  let result: QaEvaluation | AgenticEvalResult;
  let markdown: string;
  let svg: string;
  let guaranteesHeld: boolean;
  try {
    if (agentic) {
      const tau = options.dataset === 'tau-bench';
      const runs = tau ? tauBenchAgenticRuns(await loadTauBench(options.file)) : await loadSweAgentRuns(options.file);
      const agentic = await runAgenticEval(options.dataset, limit(runs), run);
      result = agentic;
      markdown = formatAgenticReport(agentic);
      const title = tau ? 'τ-bench: values the task needs, available when needed' : 'SWE-agent: values the agent reuses, available when needed';
      svg = windowChart(agenticChartSeries(agentic), { title, yLabel: 'value availability' });
      guaranteesHeld = agentic.results.every((r) => r.method !== 'memfold' || (r.metrics.pairIntegrity === 1 && r.cost.lostMessages === 0));
    } else {
      ({ result, markdown, svg, guaranteesHeld } = await evaluateQa(options, run, limit));
    }
  } finally {
    await store.close();
    if (remove) await rm(home, { recursive: true, force: true });
  }
  await mkdir(options.outDir, { recursive: true });
  const files = {
    json: path.join(options.outDir, 'results.json'),
    markdown: path.join(options.outDir, 'report.md'),
    svg: path.join(options.outDir, 'availability.svg'),
  };
  const meta = {
    file: options.file,
    ...(options.questions ? { questions: options.questions } : {}),
    createdAt: new Date().toISOString(),
    tokens: 'chars/4',
    ...(options.compaction ? { compaction: options.compaction } : {}),
  };
  await writeFile(files.json, `${JSON.stringify({ ...meta, ...result }, null, 2)}\n`);
  await writeFile(files.markdown, `${markdown}\n`);
  await writeFile(files.svg, svg);
  return { result, markdown, files, guaranteesHeld };
}
