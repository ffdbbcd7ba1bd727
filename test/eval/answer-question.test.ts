/**
 * One question answered and judged (`answerAndJudge`) against the fake OpenAI-compatible server, with memfold's own
 * memory_read on a memory store: the call limit, the question's date passed as `asked.at`, a failing endpoint after
 * its retries, and a judge that replies neither yes nor no. Then a run abandoned mid-call (the evaluation failed).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAnswerAccuracy } from '../../src/eval/answer-accuracy/answer-accuracy.js';
import { answerAndJudge, type ReadTool } from '../../src/eval/answer-accuracy/answer-question.js';
import { createChatEndpoint, emptyTally } from '../../src/eval/answer-accuracy/chat-endpoint.js';
import type { EvalQuestion } from '../../src/eval/eval-types.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { createModelQueue } from '../../src/openai/openai-queue.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';

const QUESTION: EvalQuestion = {
  id: 'q1',
  question: 'Where did I park the bike last Saturday?',
  answer: 'by the library',
  evidence: ['t1'],
  category: 'temporal-reasoning',
  adversarial: false,
  askedAt: '2024-03-10T09:00:00.000Z',
};

describe('answerAndJudge', () => {
  let fake: FakeOpenAI;
  let home: string;
  let memfold: Memfold;
  let asked: Array<{ args: unknown; at?: string }>;
  let tool: ReadTool;

  const endpoints = (maxRetries = 0) => {
    const limits = { timeoutMs: 5_000, maxRetries, deadlineMs: 60_000, queue: createModelQueue({ concurrency: 2 }), retry: { sleep: async () => {} } };
    return {
      answerer: createChatEndpoint({ model: 'answerer', baseURL: fake.baseURL }, limits),
      judge: createChatEndpoint({ model: 'judge', baseURL: fake.baseURL }, limits),
    };
  };
  const usage = () => ({ answer: emptyTally(), judge: emptyTally() });

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    home = await mkdtemp(path.join(os.tmpdir(), 'memfold-answer-q-'));
    memfold = await createMemfold({ store: 'memory', env: { HOME: home } });
    await memfold.append('c', [
      { role: 'user', content: 'I parked the bike by the library on Saturday.', createdAt: '2024-03-09T10:00:00.000Z' },
      { role: 'assistant', content: 'Noted: by the library.', createdAt: '2024-03-09T10:00:05.000Z' },
    ]);
    // The real tool, recording what the eval passes it.
    const real = memfold.memoryRead('c');
    tool = {
      execute: (args, at) => {
        asked.push({ args, ...(at?.at ? { at: at.at } : {}) });
        return real.execute(args, at);
      },
    };
  });

  beforeEach(() => {
    asked = [];
    fake.requests.length = 0;
  });

  afterAll(async () => {
    await memfold?.close();
    await fake?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('runs at most three memory_read calls, with the question date, then asks for an answer without tools', async () => {
    fake.setBehavior(behaviors.script((body) => (body.model === 'judge' ? behaviors.ok('no') : behaviors.toolCall('memory_read', { query: 'bike parked' }))));
    const tally = usage();
    const judged = await answerAndJudge({ ...endpoints(), history: [], question: QUESTION, tool, usage: tally });
    expect(judged.toolCalls).toHaveLength(3);
    expect(asked).toEqual([1, 2, 3].map(() => ({ args: '{"query":"bike parked"}', at: '2024-03-10T09:00:00.000Z' })));
    const answers = fake.requests.filter((r) => r.body.model === 'answerer');
    expect(answers.map((r) => r.body.tool_choice)).toEqual(['auto', 'auto', 'auto', 'none']);
    expect(answers[3]!.body.messages.filter((m: { role: string }) => m.role === 'tool')).toHaveLength(3);
    expect(tally.answer.calls).toBe(4);
    expect(judged).toMatchObject({ answer: '', correct: false, verdict: 'no' });
    const judgePrompt = fake.requests.find((r) => r.body.model === 'judge')!.body.messages[0].content as string;
    expect(judgePrompt).toContain('differs from the reference by one counts as correct');
    expect(judgePrompt).toContain('Response: (empty)');
  });

  it('counts a question whose answer endpoint keeps failing as wrong, with the reason, and never asks the judge', async () => {
    fake.setBehavior(behaviors.status(500));
    const judged = await answerAndJudge({ ...endpoints(1), history: [], question: QUESTION, tool, usage: usage() });
    expect(judged.correct).toBe(false);
    expect(judged.error).toMatch(/^answer: openai:answerer: failed after 2 attempts \(retries exhausted\)/);
    expect(fake.requests.map((r) => r.body.model)).toEqual(['answerer', 'answerer']);
  });

  it('reads a verdict from the first word only: "Yes." is right, "maybe" is not', async () => {
    fake.setBehavior(behaviors.script((body) => (body.model === 'judge' ? behaviors.ok('Yes.') : behaviors.ok('By the library.'))));
    const yes = await answerAndJudge({ ...endpoints(), history: [], question: QUESTION, usage: usage() });
    expect(yes).toMatchObject({ answer: 'By the library.', correct: true, verdict: 'Yes.', toolCalls: [] });
    expect(fake.requests[0]!.body.tools).toBeUndefined();
    fake.setBehavior(behaviors.script((body) => (body.model === 'judge' ? behaviors.ok('maybe, partly') : behaviors.ok('By the library.'))));
    const unsure = await answerAndJudge({ ...endpoints(), history: [], question: QUESTION, usage: usage() });
    expect(unsure).toMatchObject({ correct: false, verdict: 'maybe, partly' });
  });

  it('abandon aborts the call under way, starts no other question, and ends finish', async () => {
    let release!: () => void;
    fake.setBehavior(behaviors.hold(new Promise<void>((resolve) => (release = resolve))));
    const run = createAnswerAccuracy({
      answer: { model: 'answerer', baseURL: fake.baseURL },
      judge: { model: 'judge', baseURL: fake.baseURL },
      limits: { timeoutMs: 60_000, maxRetries: 0, deadlineMs: 60_000, concurrency: 1 },
    });
    const messages = [{ role: 'user' as const, content: 'I parked the bike by the library.' }];
    const questions = ['a', 'b', 'c'].map((id) => ({ ...QUESTION, id }));
    const finished = run.finish([{ id: 'c', messages, turnIds: ['t1'], referenceLines: ['user: I parked'], questions }], [1_000]).then(
      () => 'finished',
      (error: Error) => error.message,
    );
    await vi.waitFor(() => expect(fake.inFlight).toBe(1));
    run.abandon();
    await vi.waitFor(() => expect(fake.inFlight).toBe(0));
    release();
    expect(fake.requests).toHaveLength(1);
    // The questions dropped from the queue end the run's wait with the queue's error instead of leaving it hanging.
    expect(await finished).toBe('The queue was cleared');
  });
});
