/**
 * `memfold eval` through main(), in process, on a small conversation in the generic JSONL format
 * written by the test: the files it writes, the table it prints, and argument errors. Then on a small
 * LongMemEval file (test/fixtures/longmemeval-mini.json): question types, both BM25 baselines and
 * LongMemEval's retrieval metrics.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { QaEvalResult } from '../../src/eval/run-qa-eval.js';

const TOPICS = ['gardening', 'the weather', 'a football match', 'a new recipe', 'the train strike', 'a film', 'a book club', 'the gym'];

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += `${t}\n`), err: (t) => void (err += `${t}\n`) });
  return { code, out, err };
}

describe('memfold eval (generic JSONL)', () => {
  let dir: string;
  let turnsFile: string;
  let questionsFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-eval-cli-'));
    const turns = [];
    for (let i = 0; i < 60; i++) {
      // The opening turn stays verbatim by design (keepFirstTurns): the fact comes a few turns later.
      if (i === 4) {
        turns.push({
          conversation_id: 'demo',
          turn_id: 't4',
          speaker: 'Ana',
          text: 'My locker code at the climbing gym is 4417, remember it.',
          time: '2024-03-01T10:04:00Z',
        });
        continue;
      }
      const topic = TOPICS[i % TOPICS.length]!;
      turns.push({
        conversation_id: 'demo',
        turn_id: `t${i}`,
        speaker: i % 2 ? 'Bo' : 'Ana',
        text: `Turn ${i} about ${topic}: ${'we talked at length and nothing much came of it, '.repeat(3)}`,
        time: `2024-03-${String(1 + Math.floor(i / 10)).padStart(2, '0')}T10:${String(i).padStart(2, '0')}:00Z`,
      });
    }
    turns.push({ conversation_id: 'demo', turn_id: 't60', speaker: 'Bo', text: 'See you at the marathon on Sunday.', time: '2024-03-08T10:00:00Z' });
    turnsFile = path.join(dir, 'turns.jsonl');
    questionsFile = path.join(dir, 'questions.jsonl');
    await writeFile(turnsFile, turns.map((t) => JSON.stringify(t)).join('\n'));
    await writeFile(
      questionsFile,
      [
        { conversation_id: 'demo', question: 'What is the locker code at the climbing gym?', answer: '4417', evidence: ['t4'], category: 'early' },
        { conversation_id: 'demo', question: 'When is the marathon?', answer: 'Sunday', evidence: ['t60'], category: 'late' },
      ]
        .map((q) => JSON.stringify(q))
        .join('\n'),
    );
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('replays, prints the table and writes results.json, report.md and availability.svg to --out', async () => {
    const out = path.join(dir, 'out');
    const { code, out: stdout, err } = await run('eval', turnsFile, '--dataset', 'jsonl', '--questions', questionsFile, '--window', '1000', '--out', out);
    expect(code, err).toBe(0);
    expect(stdout).toContain('| category | method | questions | survival strict |');
    expect(stdout).toContain('### Window 1,000 tokens');
    expect((await readdir(out)).sort()).toEqual(['availability.svg', 'report.md', 'results.json']);
    const results = JSON.parse(await readFile(path.join(out, 'results.json'), 'utf8')) as QaEvalResult;
    expect(results.windows).toEqual([1000]);
    const memfold = results.results.find((r) => r.method === 'memfold')!;
    expect(memfold.cost.compactions).toBeGreaterThan(0);
    expect(memfold.cost.lostMessages).toBe(0);
    // The cost table's figures: prompt-cache reuse a share, compactions per 100k appended and mean tokens freed positive.
    expect(memfold.figures.promptCacheReuse).toBeGreaterThanOrEqual(0);
    expect(memfold.figures.promptCacheReuse!).toBeLessThanOrEqual(1);
    expect(memfold.figures.compactionsPer100kTokens!).toBeGreaterThan(0);
    expect(memfold.figures.meanTokensFreed!).toBeGreaterThan(0);
    const report = await readFile(path.join(out, 'report.md'), 'utf8');
    expect(report).toContain('| prompt cache reuse | compactions per 100k appended | mean tokens freed |');
    expect(report).toMatch(/^prompt cache reuse: /m);
    const [early, late] = memfold.outcomes;
    // The first turn was compacted away; memory_read finds it by the question's words.
    expect(early).toMatchObject({ category: 'early', verbatim: false });
    expect(early!.rank).not.toBeNull();
    expect(early!.rank!).toBeLessThanOrEqual(5);
    expect(late).toMatchObject({ category: 'late', strict: true, verbatim: true, promptRetention: 1 });
    // Truncate-oldest keeps only the end of the conversation.
    const truncate = results.results.find((r) => r.method === 'truncate-oldest')!;
    expect(truncate.outcomes.map((o) => o.strict)).toEqual([false, true]);
    expect(await readFile(path.join(out, 'availability.svg'), 'utf8')).toMatch(/^<svg /);
  });

  it('refuses bad arguments with exit 2, naming them', async () => {
    expect((await run('eval', turnsFile)).err).toMatch(/--dataset: is required/);
    const bogus = await run('eval', turnsFile, '--dataset', 'bogus');
    expect(bogus.code).toBe(2);
    expect(bogus.err).toMatch(/--dataset: must be one of locomo, longmemeval, jsonl, tau-bench/);
    expect((await run('eval', turnsFile, '--dataset', 'jsonl', '--out', path.join(dir, 'x'))).err).toMatch(/--questions: is required/);
    expect(await run('eval', turnsFile, '--dataset', 'jsonl', '--window', '8000', '--windows', '4000')).toMatchObject({ code: 2 });
    const full = await mkdtemp(path.join(dir, 'home-'));
    await writeFile(path.join(full, 'file'), '');
    expect((await run('eval', turnsFile, '--dataset', 'jsonl', '--questions', questionsFile, '--home', full)).err).toMatch(
      /--home: must be a new or empty folder/,
    );
  });
});

describe('memfold eval (LongMemEval)', () => {
  const fixture = path.join(import.meta.dirname, '../fixtures/longmemeval-mini.json');
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-eval-lme-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('replays each item, scores by question type beside both BM25 baselines, and reports the retrieval metrics', async () => {
    const out = path.join(dir, 'out');
    const { code, out: stdout, err } = await run('eval', fixture, '--dataset', 'longmemeval', '--window', '1000', '--out', out);
    expect(code, err).toBe(0);
    expect(stdout).toContain('## memfold eval: longmemeval, 2 conversations, 2 questions');
    expect(stdout).toContain('| evidence readable | first-120 probe |');
    expect(stdout).toContain("### LongMemEval's retrieval metrics of the tool answer (abstention questions left out)");
    expect(stdout).toContain('| session recall_all@5 | session ndcg_any@5 |');
    const results = JSON.parse(await readFile(path.join(out, 'results.json'), 'utf8')) as QaEvalResult;
    expect(results.results.map((r) => r.method)).toEqual([
      'memfold',
      'memfold:second-look',
      'bm25-windows',
      'bm25-sentences',
      'truncate-oldest',
      'head+tail',
      'no-compaction',
    ]);
    const memfold = results.results.find((r) => r.method === 'memfold')!;
    // The abstention question is left out of the headline, and each question type is a category.
    expect(Object.keys(memfold.metrics)).toEqual(['all', 'non-adversarial', 'multi-session', 'single-session-user']);
    expect(memfold.metrics['non-adversarial']!.questions).toBe(1);
    expect(memfold.cost.lostMessages).toBe(0);
    for (const method of ['memfold', 'bm25-windows', 'bm25-sentences']) {
      const metrics = results.results.find((r) => r.method === method)!.metrics['non-adversarial']!;
      expect(metrics.retrievalQuestions, method).toBe(1);
      expect(Object.keys(metrics.retrieval!)).toContain('turn ndcg_any@10');
    }
    // The whole history fits 3,000 tokens: both baselines show both evidence turns, the first found first.
    const windows = results.results.find((r) => r.method === 'bm25-windows')!.metrics['non-adversarial']!;
    expect(windows.readableEvidence).toBe(1);
    expect(windows.retrieval!['session recall_all@5']).toBe(1);
    expect(results.results.find((r) => r.method === 'truncate-oldest')!.metrics['non-adversarial']!.retrieval).toBeNull();
  });
});
