/**
 * The LongMemEval loader on a small file in the official shape, written for the test: each item one conversation
 * dated by its sessions, asked at its question date, with the evidence (`has_answer`) and the dataset's session
 * ids kept beside the messages, never in them.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamJsonArray } from '../../src/eval/datasets/json-array-stream.js';
import { loadLongMemEvalDataset, longMemEvalConversation, parseLongMemEvalDate, parseLongMemEvalItem } from '../../src/eval/datasets/longmemeval.js';
import { noneSkipped } from '../../src/eval/eval-types.js';

const FIXTURE = path.join(import.meta.dirname, '../fixtures/longmemeval-mini.json');

describe('LongMemEval loader', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-lme-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reads each item as one conversation: roles as given, session dates as UTC, sessions by place', async () => {
    const dataset = await loadLongMemEvalDataset(FIXTURE);
    expect(dataset.name).toBe('longmemeval');
    expect(dataset.conversations.map((c) => c.id)).toEqual(['mini-1', 'mini-2_abs']);
    const [first] = dataset.conversations;
    expect(first!.messages).toHaveLength(8);
    expect(first!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    // The file's order is replayed as it is, even where two sessions of one day are out of order.
    expect(first!.messages.map((m) => m.createdAt)).toEqual([
      ...Array(2).fill('2024-03-01T10:00:00.000Z'),
      ...Array(2).fill('2024-03-02T18:30:00.000Z'),
      ...Array(2).fill('2024-03-02T08:15:00.000Z'),
      ...Array(2).fill('2024-03-05T20:00:00.000Z'),
    ]);
    expect(first!.messages.map((m) => m.sessionId)).toEqual([
      'session_1',
      'session_1',
      'session_2',
      'session_2',
      'session_3',
      'session_3',
      'session_4',
      'session_4',
    ]);
    expect(first!.referenceLines[2]).toMatch(/^user: I just bought a gravel bike/);
  });

  it('keeps the evidence, the session ids and the answer sessions out of every message', async () => {
    const raw = await readFile(FIXTURE, 'utf8');
    const dataset = await loadLongMemEvalDataset(FIXTURE);
    const stored = JSON.stringify(dataset.conversations.map((c) => c.messages));
    expect(raw).toContain('s-answer-gravel');
    expect(stored).not.toContain('s-answer');
    expect(stored).not.toContain('has_answer');
    expect(stored).not.toContain('answer_session');
    for (const message of dataset.conversations.flatMap((c) => c.messages))
      expect(Object.keys(message).sort()).toEqual(['content', 'createdAt', 'role', 'sessionId']);
  });

  it('asks each question at its question date, with its type as category, evidence from has_answer and the retrieval targets', async () => {
    const [first, second] = (await loadLongMemEvalDataset(FIXTURE)).conversations;
    expect(first!.questions).toEqual([
      {
        id: 'mini-1',
        question: 'How many bikes do I own now?',
        answer: '3',
        evidence: ['2:1', '4:1'],
        category: 'multi-session',
        adversarial: false,
        askedAt: '2024-03-10T09:00:00.000Z',
        retrievalTargets: { sessions: ['2', '4'], turns: ['2:1', '4:1'] },
      },
    ]);
    expect(first!.sessionKeys).toEqual(['1', '1', '2', '2', '3', '3', '4', '4']);
    // An abstention question (id ending _abs) is scored like an adversarial one: outside the headline.
    expect(second!.questions[0]).toMatchObject({ id: 'mini-2_abs', adversarial: true, category: 'single-session-user' });
  });

  it('counts an item whose question has no evidence turn and does not replay it; --conversations stops reading early', async () => {
    const items = JSON.parse(await readFile(FIXTURE, 'utf8')) as Array<{ haystack_sessions: Array<Array<{ has_answer?: boolean }>> }>;
    for (const turn of items[1]!.haystack_sessions.flat()) delete turn.has_answer;
    const file = path.join(dir, 'no-evidence.json');
    await writeFile(file, JSON.stringify(items));
    const dataset = await loadLongMemEvalDataset(file);
    expect(dataset.conversations.map((c) => c.id)).toEqual(['mini-1']);
    expect(dataset.skipped.withoutEvidence).toBe(1);
    expect((await loadLongMemEvalDataset(FIXTURE, { limit: 1 })).conversations).toHaveLength(1);
  });

  it('an assistant evidence turn is evidence, but not a retrieval target (LongMemEval ranks user turns)', async () => {
    const items = JSON.parse(await readFile(FIXTURE, 'utf8')) as unknown[];
    const item = parseLongMemEvalItem(items[0], 'item 0');
    item.haystack_sessions[1]![0]!.has_answer = false;
    item.haystack_sessions[1]![1]!.has_answer = true;
    const conversation = longMemEvalConversation(item, noneSkipped());
    expect(conversation.questions[0]).toMatchObject({ evidence: ['2:2', '4:1'], retrievalTargets: { sessions: ['4'], turns: ['4:1'] } });
  });

  it('reads the date format with or without its weekday, and refuses others naming the item and field', async () => {
    expect(parseLongMemEvalDate('2023/05/21 (Sun) 19:50')).toBe('2023-05-21T19:50:00.000Z');
    expect(parseLongMemEvalDate('2023/5/2 07:05')).toBe('2023-05-02T07:05:00.000Z');
    expect(parseLongMemEvalDate('2023/02/30 (Thu) 10:00')).toBeUndefined();
    expect(parseLongMemEvalDate('May 21, 2023')).toBeUndefined();
    const items = JSON.parse(await readFile(FIXTURE, 'utf8')) as Array<{ haystack_dates: string[] }>;
    items[1]!.haystack_dates[1] = '30 March 2024';
    const file = path.join(dir, 'bad-date.json');
    await writeFile(file, JSON.stringify(items));
    await expect(loadLongMemEvalDataset(file)).rejects.toThrow(/item 1\.haystack_dates\[1\].*2023\/05\/21/);
    items[1]!.haystack_dates.pop();
    await writeFile(file, JSON.stringify(items));
    await expect(loadLongMemEvalDataset(file)).rejects.toThrow(/item 1\.haystack_dates.*one date per session/);
  });
});

describe('streamJsonArray', () => {
  it('yields each element of a file larger than one read, strings with brackets and escapes intact', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-json-array-'));
    try {
      const values = Array.from({ length: 5 }, (_, i) => ({ i, text: `${'{[ "quoted" ]} \\ back\nline é '.repeat(8_000)}${i}`, list: [[i], { deep: [] }] }));
      const file = path.join(dir, 'big.json');
      await writeFile(file, `\n[\n${values.map((v) => JSON.stringify(v)).join(' ,\n')}\n]\n`);
      const read: unknown[] = [];
      for await (const value of streamJsonArray(file)) read.push(value);
      expect(read).toEqual(values);
      await writeFile(file, '{"not": "an array"}');
      await expect(async () => {
        for await (const _ of streamJsonArray(file)) void _;
      }).rejects.toThrow(/must hold a JSON array/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
