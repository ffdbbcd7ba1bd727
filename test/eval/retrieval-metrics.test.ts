/**
 * LongMemEval's retrieval metrics on hand-computed cases: recall_all@k and ndcg_any@k as its eval_utils.py counts
 * them (the first two ranks at full weight; no correct item: recall 1, nDCG 0), and the ranking read from a
 * tool answer's text.
 */
import { describe, expect, it } from 'vitest';
import { readableView } from '../../src/eval/readable.js';
import { answerRetrieval, meanRetrieval, ndcgAny, recallAll, type CorpusTurn } from '../../src/eval/retrieval-metrics.js';

describe('recall_all@k', () => {
  it('is 1 only when every correct item is in the first k', () => {
    expect(recallAll(['a', 'x', 'b'], ['a', 'b'], 3)).toBe(1);
    expect(recallAll(['a', 'x', 'b'], ['a', 'b'], 2)).toBe(0);
    expect(recallAll([], ['a'], 5)).toBe(0);
    expect(recallAll(['x'], [], 5)).toBe(1);
  });
});

describe('ndcg_any@k', () => {
  it('gives the first two ranks full weight, then 1 / log2(rank)', () => {
    // DCG = 1 + 0 + 1/log2(3); ideal = 1 + 1.
    expect(ndcgAny(['a', 'x', 'b'], ['a', 'b'], 5)).toBeCloseTo((1 + 1 / Math.log2(3)) / 2, 12);
    // Rank 2 weighs as much as rank 1.
    expect(ndcgAny(['x', 'a'], ['a'], 5)).toBe(1);
    // Rank 4: 1/log2(4) = 0.5.
    expect(ndcgAny(['x', 'y', 'z', 'a'], ['a'], 5)).toBeCloseTo(0.5, 12);
    expect(ndcgAny(['x', 'y', 'z', 'a'], ['a'], 3)).toBe(0);
  });

  it('is 0 without a correct item; the ideal holds at most k of them', () => {
    expect(ndcgAny(['a'], [], 5)).toBe(0);
    expect(ndcgAny(['a'], ['a', 'b', 'c'], 1)).toBe(1);
  });
});

describe('retrieval read from an answer', () => {
  const turn = (id: string, session: string, user: boolean, content: string): CorpusTurn => ({ id, session, user, content });
  const corpus = [
    turn('1:1', '1', true, 'I bought a road bike in March.'),
    turn('1:2', '1', false, 'Nice, road bikes are fast on tarmac.'),
    turn('2:1', '2', true, 'My sister gave me her mountain bike.'),
    turn('3:1', '3', true, 'I like tea in the morning.'),
  ];

  it('ranks turns and sessions by where they are first readable; the turn level ranks user turns only', () => {
    const answer = readableView(
      '#1 assistant: Nice, road bikes are fast on tarmac.\n#2 user: My sister gave me her mountain bike.\n#3 user: I bought a road bike in March.',
    );
    const scores = answerRetrieval(corpus, answer, { sessions: ['1', '2'], turns: ['1:1', '2:1'] });
    // Sessions: 1 (its assistant turn comes first), 2. Turns (user only): 2:1, 1:1.
    expect(scores['session recall_all@5']).toBe(1);
    expect(scores['session ndcg_any@5']).toBe(1);
    expect(scores['turn recall_all@5']).toBe(1);
    expect(scores['turn ndcg_any@5']).toBe(1);
  });

  it('a turn not in the answer is not retrieved', () => {
    const answer = readableView('user: I like tea in the morning.\nuser: I bought a road bike in March.');
    const scores = answerRetrieval(corpus, answer, { sessions: ['1', '2'], turns: ['1:1', '2:1'] });
    expect(scores['turn recall_all@10']).toBe(0);
    // Ranked 3:1, 1:1; ideal two at ranks 1-2: DCG 0 + 1 over ideal 2.
    expect(scores['turn ndcg_any@10']).toBeCloseTo(0.5, 12);
    expect(meanRetrieval([scores, { ...scores, 'turn recall_all@10': 1 }])!['turn recall_all@10']).toBe(0.5);
    expect(meanRetrieval([])).toBeNull();
  });
});
