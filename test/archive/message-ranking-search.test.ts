/**
 * The pure pieces memory_read ranks archived messages with: search terms, BM25, best-first windows, and the
 * dates a question names. Expected values worked out by hand.
 */
import { describe, expect, it } from 'vitest';
import { bm25Scores } from '../../src/archive/ranking/bm25.js';
import { pickWindows, withNeighbourTerms } from '../../src/archive/ranking/message-windows.js';
import { relativeTimeHints, timeHints, withinHints } from '../../src/archive/ranking/query-dates.js';
import { searchTerms, stem } from '../../src/archive/ranking/search-terms.js';

describe('search terms', () => {
  it('drops question and function words, folds case and accents, strips possessives, stems lightly', () => {
    expect(searchTerms("When did Caroline's café open, and what paintings does she like?")).toEqual(['caroline', 'cafe', 'open', 'paint']);
    expect(searchTerms('What did you do?')).toEqual([]);
    expect(searchTerms('What did you do?', { keepStopWords: true, stem: false })).toEqual(['what', 'did', 'you', 'do']);
  });

  it('meets inflections but leaves numbers and short words', () => {
    expect(['painted', 'painting', 'paints'].map(stem)).toEqual(['paint', 'paint', 'paint']);
    expect(['stories', 'running', 'shopped', 'classes', 'bus', '2023s', 'cat'].map(stem)).toEqual(['story', 'run', 'shop', 'class', 'bus', '2023s', 'cat']);
  });
});

describe('bm25', () => {
  it('ranks the rarer shared word higher, and scores 0 without a shared word', () => {
    const docs = [['tea', 'cup'], ['tea', 'lisbon'], ['tea', 'pot'], ['coffee']];
    const scores = bm25Scores(docs, ['tea', 'lisbon']);
    expect(scores[1]).toBeGreaterThan(scores[0]!);
    expect(scores[0]).toBeCloseTo(scores[2]!, 10);
    expect(scores[3]).toBe(0);
    // idf(lisbon) = ln(1 + (4 - 1 + 0.5) / (1 + 0.5)); tf 1 in a doc of length 2, average 1.75, k1 1.2, b 0.75.
    const tfPart = 2.2 / (1 + 1.2 * (0.25 + (0.75 * 2) / 1.75));
    expect(scores[1]! - scores[0]!).toBeCloseTo(Math.log(1 + 3.5 / 1.5) * tfPart, 10);
  });

  it('a weighted query term counts its idf times its weight; unlisted terms weigh 1', () => {
    const docs = [['tea', 'cup'], ['tea', 'lisbon'], ['guitar', 'pot'], ['coffee']];
    const plain = bm25Scores(docs, ['tea', 'guitar']);
    const weighted = bm25Scores(docs, ['tea', 'guitar'], { weights: new Map([['guitar', 0.3]]) });
    expect(weighted[0]).toBeCloseTo(plain[0]!, 10);
    expect(weighted[2]).toBeCloseTo(0.3 * plain[2]!, 10);
    expect(weighted[3]).toBe(0);
  });
});

describe('best-first windows', () => {
  const items = [1, 2, 3, 4, 5, 6, 10, 11].map((position) => ({ position, tokens: 10 }));

  it('gives each message its neighbours’ words, across consecutive positions only', () => {
    const terms = items.map((item) => [`w${item.position}`]);
    const docs = withNeighbourTerms(items, terms, 1);
    expect(docs[0]).toEqual(['w1', 'w2']);
    expect(docs[5]).toEqual(['w5', 'w6']);
    expect(docs[6]).toEqual(['w10', 'w11']);
  });

  it('shows the best first with a neighbour each side, merges windows that touch, and stops at the budget', () => {
    // Best: position 3 (window 2-4), then 5 (window 4-6, touching), then 11 (window 10-11).
    const scores = [0, 0, 3, 0, 2, 0, 0, 1];
    const plan = pickWindows(items, scores, { radius: 1, budget: 100, blockOverhead: 5 });
    expect(plan.blocks.map((b) => b.map((i) => items[i]!.position))).toEqual([
      [2, 3, 4, 5, 6],
      [10, 11],
    ]);
    // 7 messages and two block headers.
    expect(plan.tokens).toBe(7 * 10 + 2 * 5);
    expect(plan.leftOut).toEqual([]);
  });

  it('names what the budget left out', () => {
    const scores = [0, 0, 3, 0, 2, 0, 0, 1];
    // 35 tokens: window 2-4 (30 + 5) fits; 4-6 adds 20 (no); 10-11 costs 25 (no).
    const plan = pickWindows(items, scores, { radius: 1, budget: 35, blockOverhead: 5 });
    expect(plan.blocks.map((b) => b.map((i) => items[i]!.position))).toEqual([[2, 3, 4]]);
    expect(plan.leftOut.map((i) => items[i]!.position)).toEqual([5, 11]);
    // 60 tokens: 2-4 (35), then 5 and 6 join that block (20); 10-11 would cost 25 more.
    const wider = pickWindows(items, scores, { radius: 1, budget: 60, blockOverhead: 5 });
    expect(wider.blocks.map((b) => b.map((i) => items[i]!.position))).toEqual([[2, 3, 4, 5, 6]]);
    expect(wider.leftOut.map((i) => items[i]!.position)).toEqual([11]);
  });

  it('counts what a group of items shares (a long message’s speaker and time) once, with its first item shown', () => {
    // Positions 1-6 are the sentences of one long message (group 0, 8 tokens shared); 10 and 11 short messages.
    const grouped = items.map((item, i) => (i < 6 ? { ...item, group: 0, groupTokens: 8 } : item));
    const scores = [0, 0, 3, 0, 0, 2, 0, 1];
    const plan = pickWindows(grouped, scores, { radius: 1, budget: 100, blockOverhead: 5 });
    expect(plan.blocks.map((b) => b.map((i) => grouped[i]!.position))).toEqual([
      [2, 3, 4, 5, 6],
      [10, 11],
    ]);
    // 7 items, two block headers, the group's share once.
    expect(plan.tokens).toBe(7 * 10 + 2 * 5 + 8);
  });
});

describe('dates a question names', () => {
  const at = (iso: string, text: string) => withinHints(iso, timeHints(text));

  it('a day: from a week before to two days after', () => {
    expect(at('2023-06-03T10:00:00.000Z', 'What did John share on 3 June, 2023?')).toBe(true);
    expect(at('2023-05-28T10:00:00.000Z', 'What did Maria do last weekend before June 3, 2023?')).toBe(true);
    expect(at('2023-06-06T10:00:00.000Z', 'on 3 June, 2023')).toBe(false);
  });

  it('a month of a year, with two weeks after; a bare capitalized month in any year; a year', () => {
    expect(at('2023-05-20T00:00:00.000Z', 'What did they do in May 2023?')).toBe(true);
    expect(at('2023-06-10T00:00:00.000Z', 'in May 2023')).toBe(true);
    expect(at('2023-07-01T00:00:00.000Z', 'in May 2023')).toBe(false);
    expect(at('2022-06-15T00:00:00.000Z', 'When did Melanie go camping in June?')).toBe(true);
    expect(at('2022-08-15T00:00:00.000Z', 'When did Melanie go camping in June?')).toBe(false);
    expect(at('2022-03-01T00:00:00.000Z', 'How often did she travel in 2022?')).toBe(true);
  });

  it('the verb "may" and a question without a date name no time', () => {
    expect(timeHints('What may Caroline do next?')).toEqual([]);
    expect(timeHints('Where did Ana move?')).toEqual([]);
  });

  it('relative times resolve against when the question is asked, never the machine clock', () => {
    const asked = '2023-05-30T12:00:00.000Z';
    const near = (iso: string, text: string) => withinHints(iso, relativeTimeHints(text, asked));
    // Last Saturday is 27 May 2023: a day, widened like a named one.
    expect(near('2023-05-27T09:00:00.000Z', 'What did I cook last Saturday?')).toBe(true);
    expect(near('2023-05-10T09:00:00.000Z', 'What did I cook last Saturday?')).toBe(false);
    expect(near('2023-05-16T09:00:00.000Z', 'Where did I go two weeks ago?')).toBe(true);
    expect(near('2022-09-01T09:00:00.000Z', 'What did I paint last year?')).toBe(true);
    expect(near('2023-01-10T09:00:00.000Z', 'What did I paint last year?')).toBe(false);
    // The same question asked a year later names another day.
    expect(withinHints('2023-05-27T09:00:00.000Z', relativeTimeHints('What did I cook last Saturday?', '2024-05-30T12:00:00.000Z'))).toBe(false);
  });

  it('leaves dates with their year and bare months to the rules, and the time of the question itself out', () => {
    const asked = '2023-05-30T12:00:00.000Z';
    expect(relativeTimeHints('What did I buy in May 2023?', asked)).toEqual([]);
    expect(relativeTimeHints('What happened in June?', asked)).toEqual([]);
    expect(relativeTimeHints('Can you recommend a movie for tonight?', asked)).toEqual([]);
    expect(relativeTimeHints('Any tips for my trip this weekend?', asked)).toEqual([]);
    expect(relativeTimeHints('What did I cook last Saturday?', 'not a time')).toEqual([]);
  });
});
