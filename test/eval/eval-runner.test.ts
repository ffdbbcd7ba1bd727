/**
 * The real runner on two LoCoMo conversations (8,000-token window) and one τ-bench run (4,000), on the
 * embedded default. One question, whose evidence is known to lie in an archived batch, is checked
 * against the store by a second path: the batch's parent chain instead of the coverage expansion.
 * What the model can read is held to floors set from measurement (src/eval/README.md).
 *
 * The data lives in ../shared/data: without it the suite is skipped, unless CI is set (then it fails).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArchiveEntry } from '../../src/conversation/types.js';
import { clipArchiveLabels } from '../../src/compaction/view/clip-archive.js';
import { answerTokenRetention } from '../../src/eval/answer-tokens.js';
import { loadLocomoDataset } from '../../src/eval/datasets/locomo-dataset.js';
import { loadTauBench, tauBenchAgenticRuns } from '../../src/eval/datasets/tau-bench.js';
import { openEvalStore, type EvalStore } from '../../src/eval/eval-store.js';
import type { QaDataset } from '../../src/eval/eval-types.js';
import { aggregate, ANSWERABLE, SEARCH_DEPTH } from '../../src/eval/metrics.js';
import { runAgenticEval, type AgenticEvalResult } from '../../src/eval/run-agentic-eval.js';
import { runQaEval, type QaEvalResult } from '../../src/eval/run-qa-eval.js';
import { scoreBaseline } from '../../src/eval/score-baselines.js';
import { copyPgliteTemplateTo } from '../support/backends.js';

const DATA = new URL('../../../shared/data/', import.meta.url).pathname;
const WINDOW = 8_000;
/** Measured on these two conversations at 8k: 0.900 evidence, 0.883 answer words (bm25-windows 0.873 evidence). */
const READABLE_EVIDENCE_FLOOR = 0.87;
const READABLE_ANSWER_FLOOR = 0.85;
const HAS_DATA = existsSync(`${DATA}locomo/locomo10.json`);

describe.skipIf(!HAS_DATA && !process.env.CI)('memfold eval on real conversations', () => {
  let home: string;
  let store: EvalStore;
  let dataset: QaDataset;
  let qa: QaEvalResult;
  let agentic: AgenticEvalResult;

  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'memfold-eval-test-'));
    // A fresh migrated PGlite store, copied instead of initialized (initdb costs seconds; `memfold eval` makes its own).
    copyPgliteTemplateTo(path.join(home, 'pg'));
    store = openEvalStore({ home, env: {} });
    const locomo = await loadLocomoDataset(`${DATA}locomo/locomo10.json`);
    dataset = { ...locomo, conversations: locomo.conversations.slice(0, 2) };
    qa = await runQaEval(dataset, { windows: [WINDOW], store });
    const runs = tauBenchAgenticRuns(await loadTauBench(`${DATA}agent-traces/tau-bench/gpt-4o-airline.json`));
    const longest = runs.reduce((a, b) => (b.messages.length > a.messages.length ? b : a));
    agentic = await runAgenticEval('tau-bench', [longest], { windows: [4_000], store });
    // Two replays and a τ-bench run: about a minute on 2 idle cores, more than two on a loaded machine.
  }, 400_000);

  afterAll(async () => {
    await store?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('scores memfold and the three baselines on every question, losing no message', () => {
    const questions = dataset.conversations.reduce((n, c) => n + c.questions.length, 0);
    expect(qa.results.map((r) => r.method)).toEqual(['memfold', 'bm25-windows', 'bm25-sentences', 'truncate-oldest', 'head+tail', 'no-compaction']);
    for (const r of qa.results) expect(r.outcomes).toHaveLength(questions);
    const memfold = qa.results[0]!;
    expect(memfold.cost).toMatchObject({ lostMessages: 0, failedCompactions: 0 });
    expect(memfold.cost.compactions).toBeGreaterThan(2);
    expect(memfold.cost.modelCalls).toBeGreaterThan(0);
    expect(memfold.cost.summarizerInputTokens).toBeGreaterThan(memfold.cost.compactedTokens * 0.9);
    expect(memfold.cost.promptTokens).toBeLessThan(memfold.cost.rawTokens);
    // Both conversations exceed 8,000 tokens: without compaction the request cannot be made.
    const none = qa.results.find((r) => r.method === 'no-compaction')!;
    expect(none.cost.overWindow).toBe(2);
    expect(none.metrics.all!.survivalStrict).toBe(0);
  });

  it('reports prompt-cache reuse for every method that builds a prompt, and memfold’s compaction rate and size', () => {
    const memfold = qa.results[0]!;
    const { promptCacheReuse, compactionsPer100kTokens, meanTokensFreed } = memfold.figures;
    // Compactions change the head of the prompt, and between them the prompt only grows.
    expect(promptCacheReuse).toBeGreaterThan(0);
    expect(promptCacheReuse!).toBeLessThan(1);
    expect(memfold.cost.reusedPromptTokens).toBeLessThanOrEqual(memfold.cost.comparedPromptTokens);
    expect(compactionsPer100kTokens).toBeCloseTo((memfold.cost.compactions / memfold.cost.rawTokens) * 100_000, 10);
    expect(compactionsPer100kTokens!).toBeGreaterThan(0);
    // Each compaction frees something, never more than the context it started from (about the trigger).
    expect(meanTokensFreed!).toBeGreaterThan(0);
    expect(meanTokensFreed!).toBeLessThan(WINDOW);
    for (const name of ['truncate-oldest', 'head+tail', 'no-compaction']) {
      const reuse = qa.results.find((r) => r.method === name)!.figures.promptCacheReuse;
      expect(reuse, name).toBeGreaterThanOrEqual(0);
      expect(reuse!, name).toBeLessThanOrEqual(1);
    }
    expect(qa.results.find((r) => r.method === 'bm25-windows')!.figures.promptCacheReuse).toBeNull();
    const agenticMemfold = agentic.results.find((r) => r.method === 'memfold')!;
    expect(agenticMemfold.figures.promptCacheReuse!).toBeGreaterThan(0);
    expect(agenticMemfold.figures.promptCacheReuse!).toBeLessThanOrEqual(1);
  });

  it('the baselines in the run are the pure baselines', () => {
    const truncate = qa.results.find((r) => r.method === 'truncate-oldest')!;
    const expected = aggregate(dataset.conversations.flatMap((c) => scoreBaseline(c, 'truncate-oldest', WINDOW).outcomes));
    expect(truncate.metrics.all).toEqual(expected);
  });

  it('a question whose evidence lies in an archived batch: survival, memory_read rank and retention match the store', async () => {
    const memfold = await store.memfoldFor(WINDOW);
    const conversation = dataset.conversations[0]!;
    // "When did Caroline go to the LGBTQ support group?" — evidence D1:3, in the first session.
    const question = conversation.questions.find((q) => q.evidence.join() === 'D1:3')!;
    expect(question.question).toMatch(/LGBTQ support group/);
    const storeId = `${conversation.id}@${WINDOW}`;
    const evidenceId = `${storeId}/${conversation.turnIds.indexOf('D1:3')}`;
    const outcome = qa.results[0]!.outcomes.find((o) => o.conversationId === conversation.id && o.questionId === question.id)!;

    const context = await memfold.context(storeId);
    expect(context.some((m) => m.id === evidenceId)).toBe(false);
    const summaries = await memfold.archive.list({ conversationId: storeId, kind: 'summary' });
    const batch = summaries.find((b) => b.depth === 0 && b.sourceIds.includes(evidenceId))!;
    expect(batch).toBeDefined();

    // The chain from the batch up through its parents; the question survives iff the clip-archive shows one of them.
    const byLabel = new Map(summaries.map((b) => [b.label, b]));
    const chain: ArchiveEntry[] = [];
    for (let b: ArchiveEntry | undefined = batch; b; b = b.parentLabel ? byLabel.get(b.parentLabel) : undefined) chain.push(b);
    const shown = clipArchiveLabels(context.find((m) => m.kind === 'clip_archive')!.content);
    const survives = chain.some((b) => shown.includes(b.label));
    expect(outcome).toMatchObject({ strict: survives, lenient: survives, verbatim: false });

    // memory_read's rank: the first hit that is the batch, one of its ancestors, or a transcript holding the turn.
    const hits = await memfold.archive.search({ conversationId: storeId, query: question.question, limit: SEARCH_DEPTH });
    const holds = (e: ArchiveEntry) => (e.kind === 'transcript' ? (e.messages ?? []).some((m) => m.id === evidenceId) : chain.some((b) => b.label === e.label));
    const index = hits.findIndex((h) => holds(h.entry));
    expect(outcome.rank).toBe(index < 0 ? null : index + 1);
    expect(outcome.rank).not.toBeNull();

    // Answer retention reads the depth-0 batch that summarizes the evidence turn.
    expect(outcome.retention).toBe(answerTokenRetention(String(question.answer), batch.content));
  });

  it('the model can read the evidence of most questions, and more of it than a plain BM25 over every message shows', () => {
    const memfold = qa.results.find((r) => r.method === 'memfold')!.metrics[ANSWERABLE]!;
    const bm25 = qa.results.find((r) => r.method === 'bm25-windows')!.metrics[ANSWERABLE]!;
    // Floors a little under what these two conversations measure (src/eval/README.md): a ranking or display change that
    // loses evidence fails here.
    expect(memfold.readableEvidence).toBeGreaterThanOrEqual(READABLE_EVIDENCE_FLOOR);
    expect(memfold.readableAnswer!).toBeGreaterThanOrEqual(READABLE_ANSWER_FLOOR);
    expect(memfold.readableEvidence).toBeGreaterThan(bm25.readableEvidence);
    expect(memfold.toolTokensMean!).toBeLessThanOrEqual(3_000);
    expect(memfold.toolTokensP90!).toBeLessThanOrEqual(3_000);
  });

  it('a question’s readable score is what memory_read really answers, read again from the store', async () => {
    const memfold = await store.memfoldFor(WINDOW);
    const conversation = dataset.conversations[1]!;
    const outcomes = qa.results[0]!.outcomes.filter((o) => o.conversationId === conversation.id).slice(0, 12);
    for (const outcome of outcomes) {
      const question = conversation.questions.find((q) => q.id === outcome.questionId)!;
      const { output } = await memfold.memoryRead(`${conversation.id}@${WINDOW}`).execute({ query: question.question });
      const flat = output.replace(/\s+/g, ' ');
      const found = question.evidence.map((turn) => {
        // Read naively: the whole turn when short, else any 120-character stretch starting at a word.
        const text = conversation.messages[conversation.turnIds.indexOf(turn)]!.content.replace(/\s+/g, ' ').trim();
        if (text.length <= 120) return flat.includes(text);
        return [...text.matchAll(/(?:^| )(?=\S)/g)].some((m) => {
          const start = m.index + (m[0] === ' ' ? 1 : 0);
          return start + 120 <= text.length && flat.includes(text.slice(start, start + 120));
        });
      });
      expect(outcome.readable.evidenceInTool).toBeCloseTo(found.filter(Boolean).length / found.length, 10);
    }
  });

  it('τ-bench: no tool call is split from its result, and the values the task needs stay available', () => {
    const memfold = agentic.results.find((r) => r.method === 'memfold')!;
    expect(memfold.cost.compactions).toBeGreaterThan(0);
    expect(memfold.cost.lostMessages).toBe(0);
    expect(memfold.metrics.toolPairs).toBe(20);
    expect(memfold.metrics.pairIntegrity).toBe(1);
    expect(memfold.metrics.values).toBeGreaterThan(3);
    expect(memfold.metrics.valueAvailability).toBe(1);
    // Cutting by tokens alone separates calls from results.
    expect(agentic.results.find((r) => r.method === 'head+tail')!.metrics.pairIntegrity).toBeLessThan(1);
  });
});
