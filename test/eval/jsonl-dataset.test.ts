/** The generic JSONL format: parsing, roles, evidence checks, and errors that name the line and field. */
import { describe, expect, it } from 'vitest';
import { parseJsonlDataset } from '../../src/eval/datasets/jsonl-dataset.js';

const lines = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');

describe('generic JSONL dataset', () => {
  const turns = lines([
    { conversation_id: 'c1', turn_id: 't1', speaker: 'Ana', text: 'I moved to Porto.', time: '2024-05-01T10:00:00Z' },
    { conversation_id: 'c1', turn_id: 't2', speaker: 'Bo', text: 'Nice!', time: '2024-05-01T10:01:00Z' },
    { conversation_id: 'c1', turn_id: 't3', role: 'assistant', text: 'Noted.' },
    { conversation_id: 'c2', turn_id: 1, role: 'user', text: 'Hello' },
  ]);
  const questions = lines([
    { conversation_id: 'c1', question: 'Where did Ana move?', answer: 'Porto', evidence: ['t1'], category: 'single-hop' },
    { conversation_id: 'c1', question: 'Trick?', evidence: ['t2', 'nope'], adversarial: true },
    { conversation_id: 'c2', question: 'No evidence?', evidence: [] },
    { conversation_id: 'c2', question: 'Only bad evidence?', evidence: ['x'] },
  ]);

  it('reads turns as messages, turn ids beside them, and questions with checked evidence', () => {
    const dataset = parseJsonlDataset(turns, questions);
    const [c1, c2] = dataset.conversations;
    expect(c1!.messages).toEqual([
      { role: 'user', name: 'Ana', content: 'I moved to Porto.', createdAt: '2024-05-01T10:00:00.000Z' },
      { role: 'assistant', name: 'Bo', content: 'Nice!', createdAt: '2024-05-01T10:01:00.000Z' },
      { role: 'assistant', content: 'Noted.' },
    ]);
    expect(c1!.turnIds).toEqual(['t1', 't2', 't3']);
    expect(c1!.referenceLines).toEqual(['Ana: I moved to Porto.', 'Bo: Nice!', 'assistant: Noted.']);
    expect(c1!.questions).toEqual([
      { id: '0', question: 'Where did Ana move?', answer: 'Porto', evidence: ['t1'], category: 'single-hop', adversarial: false },
      { id: '1', question: 'Trick?', evidence: ['t2'], category: 'uncategorized', adversarial: true },
    ]);
    expect(c2!.turnIds).toEqual(['1']);
    expect(c2!.questions).toEqual([]);
    expect(dataset.skipped).toEqual({ malformedEvidence: 2, withoutEvidence: 1, onlyMalformedEvidence: 1 });
  });

  it('names the line and field of bad input', () => {
    expect(() => parseJsonlDataset('{"conversation_id":"c","turn_id":"t","text":"x"}', '')).toThrow(/turns line 1\.speaker: is required when role is absent/);
    expect(() => parseJsonlDataset('\n{"conversation_id":"c","turn_id":"t","role":"robot","text":"x"}', '')).toThrow(/turns line 2\.role/);
    expect(() => parseJsonlDataset(turns, '{"conversation_id":"zz","question":"q","evidence":[]}')).toThrow(/questions line 1\.conversation_id/);
    expect(() => parseJsonlDataset(turns, '{"conversation_id":"c1","question":"q","evidence":"t1"}')).toThrow(/questions line 1\.evidence/);
    expect(() => parseJsonlDataset(`${turns}\n{"conversation_id":"c1","turn_id":"t1","role":"user","text":"again"}`, '')).toThrow(
      /turns line 5\.turn_id: repeats/,
    );
    expect(() => parseJsonlDataset('{"conversation_id":"c","turn_id":"t","role":"user","text":"x","time":"yesterday"}', '')).toThrow(/\.time/);
    expect(() => parseJsonlDataset('not json', '')).toThrow(/turns line 1: is not valid JSON/);
    expect(() => parseJsonlDataset('{"turn_id":"t","role":"user","text":"x"}', '')).toThrow(
      'Invalid argument turns line 1.conversation_id: must be a non-empty string',
    );
    expect(() => parseJsonlDataset('{"conversation_id":"c","turn_id":"t","role":"user","text":7}', '')).toThrow(
      'Invalid argument turns line 1.text: must be a string',
    );
    expect(() => parseJsonlDataset(turns, '{"conversation_id":"c1","question":"q","evidence":["t1",true]}')).toThrow(/questions line 1\.evidence/);
    expect(() => parseJsonlDataset(turns, '{"conversation_id":"c1","question":"q","adversarial":"yes"}')).toThrow(
      'Invalid argument questions line 1.adversarial: must be true or false',
    );
    expect(() => parseJsonlDataset('{"conversation_id":"c","turn_id":"t","role":"user","text":"x","time":"2023-02-30"}', '')).toThrow(
      /turns line 1\.time: must be an ISO 8601 date or time/,
    );
  });
});
