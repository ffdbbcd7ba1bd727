/**
 * The bm25-sentences baseline: the matching sentence of a long message with one neighbouring sentence of that
 * message, not the whole message, best first within the budget; readable as an excerpt.
 */
import { describe, expect, it } from 'vitest';
import { bm25SentencesAnswer, bm25SentencesIndex, sentencesOf } from '../../src/eval/bm25-sentences.js';
import { readableView, scoreReadable, toolTokens } from '../../src/eval/readable.js';

const filler = (topic: string, n: number) =>
  Array.from({ length: n }, (_, i) => `Here is point ${i + 1} about ${topic}, written out at some length so the message runs long.`).join(' ');

const LONG_REPLY = `${filler('stretching', 6)} The ferry to the island leaves from pier nine at seven every morning, and the last one returns at six. ${filler('warming up', 6)}`;

const messages = [
  { role: 'user' as const, content: 'What should I do before a run?', createdAt: '2024-01-01T10:00:00.000Z' },
  { role: 'assistant' as const, content: LONG_REPLY, createdAt: '2024-01-01T10:00:00.000Z' },
  { role: 'user' as const, content: 'Thanks. I also like gardening on weekends.', createdAt: '2024-01-02T10:00:00.000Z' },
];

describe('bm25-sentences', () => {
  it('splits with Intl.Segmenter, each sentence keeping its trailing space', () => {
    expect(sentencesOf('Hello there. How are you? Fine!')).toEqual(['Hello there. ', 'How are you? ', 'Fine!']);
    expect(sentencesOf('Hello there. How are you?').join('')).toBe('Hello there. How are you?');
  });

  it('shows the matching sentence and the next of its message, not the whole message', () => {
    const index = bm25SentencesIndex(messages);
    const answer = bm25SentencesAnswer(index, 'When does the ferry to the island leave?', 3_000);
    expect(answer).toContain('The ferry to the island leaves from pier nine at seven every morning, and the last one returns at six.');
    expect(answer.startsWith('[2024-01-01T10:00:00.000Z] assistant: ')).toBe(true);
    expect(answer.length).toBeLessThan(LONG_REPLY.length / 2);
    const score = scoreReadable([LONG_REPLY], undefined, readableView(''), readableView(answer));
    expect(score).toMatchObject({ evidence: 1, evidencePrefix: 0 });
  });

  it('stays within the budget and answers nothing when no word matches', () => {
    const index = bm25SentencesIndex(messages);
    const answer = bm25SentencesAnswer(index, 'point about stretching warming', 60);
    expect(toolTokens(answer)).toBeLessThanOrEqual(60);
    expect(answer).not.toBe('');
    expect(bm25SentencesAnswer(index, 'zebra', 3_000)).toBe('');
  });
});
