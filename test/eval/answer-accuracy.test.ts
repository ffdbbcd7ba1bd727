/**
 * `memfold eval --answer-model --judge-model` end to end through the CLI against the fake OpenAI-compatible server, on
 * test/fixtures/longmemeval-mini.json (a multi-session count and an abstention). The scripted answer model calls
 * memory_read once when offered it, then answers "3 bikes" only when it has read a memory_read answer ("2 bikes"
 * otherwise); it declines the hamster question. The scripted judge reads its own prompt and says yes when the
 * response holds the reference (or, for an abstention, declines). So memfold is right twice, the prompts without
 * memory_read once each, and every token and dollar is known. Then LoCoMo's categories under the generic rule, and a
 * longer conversation whose fact only memory_read's answer gives the model: the same text memfold's tool answers.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnswerAccuracyResult } from '../../src/eval/answer-accuracy/answer-accuracy.js';
import { openEvalStore } from '../../src/eval/eval-store.js';
import { behaviors, startFakeOpenAI, type FakeBehavior, type FakeOpenAI } from '../support/fake-openai-server.js';
import { runCli } from '../support/run-cli.js';

const fixture = path.join(import.meta.dirname, '../fixtures/longmemeval-mini.json');
const ANSWER_MODEL = 'gpt-4.1-mini'; // $0.40 / $1.60 per million tokens in memfold's table
const JUDGE_MODEL = 'gpt-4o-mini'; // $0.15 / $0.60
const CALL_USAGE = { prompt_tokens: 100, completion_tokens: 10 };
/** Half of an answer's prompt served from the provider's prompt cache (OpenAI's usage field). */
const ANSWER_USAGE = { prompt_tokens: 200, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 100 } };
const JUDGE_USAGE = { prompt_tokens: 50, completion_tokens: 1 };

type Message = { role: string; content: string | null };

function answerModel(body: { messages: Message[]; tools?: unknown[] }): FakeBehavior {
  const question = String(body.messages[body.messages.length - 1]?.content ?? '');
  const readMemory = body.messages.some((m) => m.role === 'tool');
  if (body.tools && !readMemory) return behaviors.toolCall('memory_read', { query: question }, CALL_USAGE);
  const asked = body.messages.findLast((m) => m.role === 'user')!.content ?? '';
  const text = asked.includes('hamster') ? "I can't tell from the conversation." : readMemory ? 'You own 3 bikes.' : 'You own 2 bikes.';
  return { kind: 'ok', text, usage: ANSWER_USAGE };
}

function judgeModel(body: { messages: Message[] }): FakeBehavior {
  const prompt = String(body.messages[0]?.content ?? '');
  const response = /^Response: (.*)$/m.exec(prompt)?.[1] ?? '';
  const reference = /^Reference answer: (.*)$/m.exec(prompt)?.[1] ?? '';
  const abstention = prompt.includes('cannot be answered from the conversation');
  const yes = abstention ? response.includes("can't tell") : response.includes(reference);
  return { kind: 'ok', text: yes ? 'Yes.' : 'no', usage: JUDGE_USAGE };
}

describe('memfold eval --answer-model --judge-model', () => {
  let fake: FakeOpenAI;
  let dir: string;
  let result: Awaited<ReturnType<typeof runCli>>;
  let accuracy: AnswerAccuracyResult;
  let report: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ behavior: behaviors.script((body) => (body?.model === JUDGE_MODEL ? judgeModel(body) : answerModel(body))) });
    dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-answer-'));
    const out = path.join(dir, 'out');
    // An endpoint on 127.0.0.1 with no MEMFOLD_SUMMARY_MODEL or MEMFOLD_MODEL: memfold still summarizes offline.
    result = await runCli(
      ['eval', fixture, '--dataset', 'longmemeval', '--window', '1000', '--answer-model', ANSWER_MODEL, '--judge-model', JUDGE_MODEL, '--out', out],
      { env: { OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'sk-test-answer', MEMFOLD_MODEL: undefined }, progress: true },
    );
    accuracy = (JSON.parse(await readFile(path.join(out, 'results.json'), 'utf8')) as { answerAccuracy: AnswerAccuracyResult }).answerAccuracy;
    report = await readFile(path.join(out, 'report.md'), 'utf8');
  }, 120_000);

  afterAll(async () => {
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const method = (name: string) => accuracy.results.find((r) => r.method === name)!;

  it('scores each method per category: memfold read its archive and answered both, the others only the abstention', () => {
    expect(result.code, result.stderr).toBe(0);
    expect(accuracy.answerModel).toBe(ANSWER_MODEL);
    expect(accuracy.judgeModel).toBe(JUDGE_MODEL);
    expect(accuracy.results.map((r) => `${r.method}@${r.window}`)).toEqual(['memfold@1000', 'truncate-oldest@1000', 'full-context@128000']);
    expect(method('memfold').accuracy).toEqual({
      all: { questions: 2, correct: 2, accuracy: 1, failed: 0 },
      abstention: { questions: 1, correct: 1, accuracy: 1, failed: 0 },
      'multi-session': { questions: 1, correct: 1, accuracy: 1, failed: 0 },
    });
    for (const name of ['truncate-oldest', 'full-context']) {
      expect(method(name).accuracy.all).toEqual({ questions: 2, correct: 1, accuracy: 0.5, failed: 0 });
      expect(method(name).accuracy['multi-session']!.correct).toBe(0);
      expect(method(name).memoryReadCalls).toBe(0);
    }
    expect(method('full-context').cut).toEqual({ conversations: 0, messages: 0 });
    // One bar: 12 messages replayed and 2 questions scored, then 2 questions answered by each of 3 methods.
    expect(result.progress).toMatch(/\/20 answers\n/);
    expect(result.progress).toContain('20/20 done');
  });

  it('ran memory_read with the question and sent its answer back to the model', () => {
    const memfold = accuracy.answers.filter((a) => a.method === 'memfold');
    expect(memfold.map((a) => a.toolCalls.map((c) => JSON.parse(c.arguments)))).toEqual([
      [{ query: 'How many bikes do I own now?' }],
      [{ query: 'What is the name of my hamster?' }],
    ]);
    expect(memfold.every((a) => a.toolCalls[0]!.ok)).toBe(true);
    const answerRequests = fake.requests.filter((r) => r.body?.model === ANSWER_MODEL);
    const followUps = answerRequests.filter((r) => r.body.messages.some((m: Message) => m.role === 'tool'));
    expect(followUps).toHaveLength(2);
    for (const request of followUps) {
      const tool = request.body.messages.find((m: Message) => m.role === 'tool');
      const call = request.body.messages.find((m: { tool_calls?: Array<{ id: string }> }) => m.tool_calls)?.tool_calls[0];
      expect(tool.tool_call_id).toBe(call.id);
      expect(tool.content.length).toBeGreaterThan(0);
    }
    // The question's date is the model's today; the conversation's messages carry theirs; memfold's endpoint key is sent.
    const first = answerRequests.find((r) => r.body.tools && r.body.messages.at(-1).content === 'How many bikes do I own now?')!;
    expect(first.body.messages[0].content).toContain('Today is 2024-03-10 09:00 (UTC).');
    expect(first.body.messages.some((m: Message) => /^\[2024-03-05 20:00\] /.test(String(m.content)))).toBe(true);
    expect(first.headers.authorization).toBe('Bearer sk-test-answer');
    expect(first.body.tools[0].function.name).toBe('memory_read');
  });

  it('counts the tokens the endpoint reported and prices them at the table, in results.json and report.md', () => {
    const memfold = method('memfold');
    expect(memfold.usage.answer).toEqual({ calls: 4, inputTokens: 600, cachedInputTokens: 200, outputTokens: 60, estimatedCalls: 0 });
    expect(memfold.usage.judge).toEqual({ calls: 2, inputTokens: 100, cachedInputTokens: 0, outputTokens: 2, estimatedCalls: 0 });
    // 400 × 0.40 + 200 cached × 0.10 + 60 × 1.60 = 276 µ$; 100 × 0.15 + 2 × 0.60 = 16.2 µ$.
    expect(memfold.costUsd).toEqual({ answer: 0.000276, judge: 0.0000162, total: 0.0002922 });
    const truncated = method('truncate-oldest');
    expect(truncated.usage.answer).toEqual({ calls: 2, inputTokens: 400, cachedInputTokens: 200, outputTokens: 40, estimatedCalls: 0 });
    // 200 × 0.40 + 200 cached × 0.10 + 40 × 1.60 = 164 µ$.
    expect(truncated.costUsd).toEqual({ answer: 0.000164, judge: 0.0000162, total: 0.0001802 });
    expect(accuracy.total.usage.answer.calls).toBe(8);
    expect(accuracy.total.costUsd.total).toBeCloseTo(0.0002922 + 2 * 0.0001802, 12);
    expect(report).toContain('## Answer accuracy');
    expect(report).toContain('| multi-session | 1 | 1.000 (1/1) | 0.000 (0/1) | 0.000 (0/1) |');
    expect(report).toContain('| all | 2 | 1.000 (2/2) | 0.500 (1/2) | 0.500 (1/2) |');
    expect(report).toContain('| memfold (1,000) | 4 | 600 (200 cached) / 60 | 2 | 100 / 2 | 2 | 0 / 0 | $0.000276 | $0.000016 | $0.000292 |');
  });
});

/** A LoCoMo-shaped file written here (no dataset text): two sessions, a single-hop, a temporal and an adversarial question. */
function locomoSample() {
  const turn = (n: number, speaker: string, text: string) => ({ speaker, dia_id: `D${n}`, text });
  return [
    {
      sample_id: 'conv-test',
      conversation: {
        speaker_a: 'Ana',
        speaker_b: 'Bo',
        session_1_date_time: '10:00 am on 7 May, 2023',
        session_1: [turn(1, 'Ana', 'I moved to Lisbon last week for the new job.'), turn(2, 'Bo', 'Lisbon! How is the flat?')],
        session_2_date_time: '6:30 pm on 20 May, 2023',
        session_2: [turn(3, 'Ana', 'The flat is small but it has a balcony.'), turn(4, 'Bo', 'A balcony is worth a lot.')],
      },
      qa: [
        { question: 'Where did Ana move?', answer: 'Lisbon', evidence: ['D1'], category: 4 },
        { question: 'When did Ana move to Lisbon?', answer: 'The week before 7 May 2023', evidence: ['D1'], category: 2 },
        { question: 'Where did Bo move?', adversarial_answer: 'Lisbon', evidence: ['D1'], category: 5 },
      ],
    },
  ];
}

describe('memfold eval --answer-model on LoCoMo', () => {
  it("judges LoCoMo's categories with the generic rule and its adversarial questions as abstentions", async () => {
    const judged: string[] = [];
    const fake = await startFakeOpenAI({
      behavior: behaviors.script((body) => {
        if (body?.model !== JUDGE_MODEL) return { kind: 'ok', text: 'Lisbon.', usage: ANSWER_USAGE };
        judged.push(String(body.messages[0].content));
        return { kind: 'ok', text: 'yes', usage: JUDGE_USAGE };
      }),
    });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-answer-locomo-'));
    try {
      const file = path.join(dir, 'locomo.json');
      await writeFile(file, JSON.stringify(locomoSample()));
      const out = path.join(dir, 'out');
      const run = await runCli(
        ['eval', file, '--dataset', 'locomo', '--window', '1000', '--answer-model', ANSWER_MODEL, '--judge-model', JUDGE_MODEL, '--out', out],
        {
          env: { OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'sk-test', MEMFOLD_MODEL: undefined },
        },
      );
      expect(run.code, run.stderr).toBe(0);
      const { answerAccuracy } = JSON.parse(await readFile(path.join(out, 'results.json'), 'utf8')) as { answerAccuracy: AnswerAccuracyResult };
      const memfold = answerAccuracy.results.find((r) => r.method === 'memfold')!;
      expect(Object.keys(memfold.accuracy)).toEqual(['all', 'abstention', 'single-hop', 'temporal']);
      expect(answerAccuracy.answers.filter((a) => a.method === 'memfold').map((a) => a.rule)).toEqual(['generic', 'generic', 'abstention']);
      expect(judged).toHaveLength(9);
      expect(judged.filter((p) => p.includes('Say yes when the response says it cannot answer'))).toHaveLength(3);
      expect(judged.some((p) => p.includes('differs from the reference by one'))).toBe(false);
      // The speakers travel as the messages' names, the session dates as their times.
      const asked = fake.requests.find((r) => r.body?.model === ANSWER_MODEL && r.body.tools)!;
      expect(asked.body.messages[1]).toMatchObject({ role: 'user', name: 'Ana', content: '[2023-05-07 10:00] I moved to Lisbon last week for the new job.' });
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/** A JSONL conversation long enough that the fact is compacted away at a 1,000-token window (as in eval-cli.test.ts). */
function lockerConversation(): { turns: string; questions: string } {
  const turns = [];
  for (let i = 0; i < 60; i++) {
    const time = `2024-03-${String(1 + Math.floor(i / 10)).padStart(2, '0')}T10:${String(i).padStart(2, '0')}:00Z`;
    const text =
      i === 4 ? 'My locker code at the climbing gym is 4417, remember it.' : `Turn ${i}: ${'we talked at length and nothing much came of it, '.repeat(3)}`;
    turns.push({ conversation_id: 'demo', turn_id: `t${i}`, speaker: i % 2 ? 'Bo' : 'Ana', text, time });
  }
  const question = { conversation_id: 'demo', question: 'What is the locker code at the climbing gym?', answer: '4417', evidence: ['t4'], category: 'early' };
  return { turns: turns.map((t) => JSON.stringify(t)).join('\n'), questions: JSON.stringify(question) };
}

describe('memfold eval --answer-model: the answer memory_read gives the model', () => {
  it("is memfold's own memory_read answer for the model's query, holding the archived fact", async () => {
    // The answer model reads the code only from what memory_read sent back.
    const fake = await startFakeOpenAI({
      behavior: behaviors.script((body) => {
        if (body?.model === JUDGE_MODEL) return judgeModel(body);
        const tool = body.messages.find((m: Message) => m.role === 'tool');
        if (body.tools && !tool) return behaviors.toolCall('memory_read', { query: 'locker code climbing gym' }, CALL_USAGE);
        const code = /locker code at the climbing gym is (\d+)/.exec(String(tool?.content ?? ''))?.[1];
        return { kind: 'ok', text: code ? `The code is ${code}.` : "I can't tell from the conversation.", usage: ANSWER_USAGE };
      }),
    });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-answer-tool-'));
    try {
      const { turns, questions } = lockerConversation();
      await writeFile(path.join(dir, 'turns.jsonl'), turns);
      await writeFile(path.join(dir, 'questions.jsonl'), questions);
      const home = path.join(dir, 'store');
      const argv = ['eval', path.join(dir, 'turns.jsonl'), '--dataset', 'jsonl', '--questions', path.join(dir, 'questions.jsonl'), '--window', '1000'];
      const run = await runCli([...argv, '--home', home, '--answer-model', ANSWER_MODEL, '--judge-model', JUDGE_MODEL, '--out', path.join(dir, 'out')], {
        env: { OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'sk-test', MEMFOLD_MODEL: undefined },
      });
      expect(run.code, run.stderr).toBe(0);
      const { answerAccuracy } = JSON.parse(await readFile(path.join(dir, 'out', 'results.json'), 'utf8')) as { answerAccuracy: AnswerAccuracyResult };
      const accuracy = Object.fromEntries(answerAccuracy.results.map((r) => [r.method, r.accuracy.all!.accuracy]));
      // The fact is out of the newest 1,000 tokens, within the whole conversation; this model reads only the tool.
      expect(accuracy).toEqual({ memfold: 1, 'truncate-oldest': 0, 'full-context': 0 });
      const followUp = fake.requests.find((r) => r.body?.model === ANSWER_MODEL && r.body.messages.some((m: Message) => m.role === 'tool'))!;
      const sent = followUp.body.messages.find((m: Message) => m.role === 'tool').content as string;
      // The message is out of memfold's live history (the clip-archive's summary may quote it; this model does not read it).
      expect(
        followUp.body.messages
          .slice(1, -3)
          .some((m: Message) => m.role !== 'system' && String(m.content).includes('My locker code at the climbing gym is 4417')),
      ).toBe(false);
      // The same call on the store the eval kept answers the same text.
      const store = openEvalStore({ home, env: {} });
      try {
        const memfold = await store.memfoldFor(1000);
        const again = await memfold.memoryRead('demo@1000').execute({ query: 'locker code climbing gym' });
        expect(sent).toBe(again.output);
        expect(sent).toContain('My locker code at the climbing gym is 4417');
      } finally {
        await store.close();
      }
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('memfold eval answer-accuracy flags', () => {
  it('needs both models, and a key variable only beside its own endpoint', async () => {
    const one = await runCli(['eval', fixture, '--dataset', 'longmemeval', '--answer-model', 'm']);
    expect(one.code).not.toBe(0);
    expect(one.stderr).toContain('--judge-model: is required with --answer-model');
    const key = await runCli(['eval', fixture, '--dataset', 'longmemeval', '--answer-model', 'm', '--judge-model', 'j', '--judge-api-key-env', 'JUDGE_KEY']);
    expect(key.stderr).toContain('--judge-api-key-env: needs --judge-base-url');
    const unset = await runCli(
      [
        'eval',
        fixture,
        '--dataset',
        'longmemeval',
        '--answer-model',
        'm',
        '--judge-model',
        'j',
        '--judge-base-url',
        'http://127.0.0.1:9/v1',
        '--judge-api-key-env',
        'MEMFOLD_TEST_UNSET_KEY',
      ],
      { env: { MEMFOLD_TEST_UNSET_KEY: undefined } },
    );
    expect(unset.stderr).toContain('--judge-api-key-env: names MEMFOLD_TEST_UNSET_KEY, which is not set');
  });
});
