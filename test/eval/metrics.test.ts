/**
 * The pure metrics on small hand-made cases, every expected number worked out by hand.
 */
import { describe, expect, it } from 'vitest';
import type { ArchiveEntry, ConversationMessage } from '../../src/conversation/types.js';
import { answerTokenRetention, normalizedTokens } from '../../src/eval/answer-tokens.js';
import { headAndTail, noCompaction, referenceTokens, truncateOldest } from '../../src/eval/baselines.js';
import { batchCoverage, coveringBatches, hitCoverage, lostMessages, shownCoverage } from '../../src/eval/coverage.js';
import type { EvalConversation, EvalQuestion } from '../../src/eval/eval-types.js';
import { aggregate, aggregateByCategory, scoreQuestion } from '../../src/eval/metrics.js';
import { scoreBaseline } from '../../src/eval/score-baselines.js';
import { EMPTY_VIEW } from '../../src/eval/readable.js';

function summary(label: string, depth: number, sourceIds: string[], content: string, parentLabel?: string): ArchiveEntry {
  return {
    kind: 'summary',
    label,
    conversationId: 'c',
    depth,
    start: '2023-05-08T00:00:00.000Z',
    end: '2023-05-09T00:00:00.000Z',
    count: sourceIds.length,
    content,
    sourceIds,
    operationId: 'op',
    ...(parentLabel ? { parentLabel } : {}),
  };
}

function transcript(label: string, ids: string[]): ArchiveEntry {
  const messages = ids.map(
    (id, seq) => ({ id, conversationId: 'c', seq, role: 'user', content: id, createdAt: '2023-05-08T00:00:00.000Z' }) as ConversationMessage,
  );
  return { ...summary(label, 0, ids, ids.join('\n')), kind: 'transcript', parentLabel: 'A', messages };
}

const question = (id: string, extra: Partial<EvalQuestion> = {}): EvalQuestion => ({
  id,
  question: `question ${id}`,
  evidence: [],
  category: 'single-hop',
  adversarial: false,
  ...extra,
});

// Messages m0..m5. A and B (depth 0) fold into P (depth 1); D (depth 0) is on its own; m4 and m5 are live.
// The clip-archive shows D only, so P's messages m0..m2 are out of the prompt.
const A = summary('A', 0, ['m0', 'm1'], 'Ana flew to Paris in 2023.', 'P');
const B = summary('B', 0, ['m2'], 'Ben likes tea.', 'P');
const P = summary('P', 1, ['A', 'B'], 'Ana travelled; Ben likes tea.');
const D = summary('D', 0, ['m3'], 'Cleo adopted a cat named Miso.');
const summaries = [A, B, P, D];
const coverage = batchCoverage(summaries);
const verbatim = new Set(['m4', 'm5']);
const summarized = shownCoverage(['D'], coverage);

describe('coverage', () => {
  it('expands a batch to the messages under it, through every depth', () => {
    expect([...coverage.get('P')!].sort()).toEqual(['m0', 'm1', 'm2']);
    expect([...coverage.get('D')!]).toEqual(['m3']);
    expect([...summarized]).toEqual(['m3']);
  });

  it('a transcript hit covers its own messages; a summary hit the messages under it', () => {
    expect([...hitCoverage(transcript('T', ['m1', 'm2']), coverage)]).toEqual(['m1', 'm2']);
    expect([...hitCoverage(P, coverage)].sort()).toEqual(['m0', 'm1', 'm2']);
  });

  it('finds the depth-0 batches that summarize given messages', () => {
    expect(coveringBatches(summaries, ['m1', 'm3']).map((b) => b.label)).toEqual(['A', 'D']);
  });

  it('a cycle of labels covers nothing instead of looping', () => {
    const loop = batchCoverage([summary('X', 1, ['Y'], ''), summary('Y', 1, ['X'], '')]);
    expect(loop.get('X')!.size).toBe(0);
  });

  it('counts messages neither live nor summarized', () => {
    const ids = (list: string[]) => list.map((id) => ({ id }));
    expect(lostMessages(ids(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']), ids(['m4', 'm5']), summaries)).toBe(1);
  });
});

describe('per-question metrics', () => {
  // Survival and recall only: nothing readable (the readable metrics have their own suite).
  const unread = { evidenceTexts: [], prompt: EMPTY_VIEW };
  const outcomes = [
    // Live verbatim.
    scoreQuestion({ conversationId: 'c', question: question('q1'), evidenceIds: ['m4'], verbatim, summarized, promptText: '', ...unread }),
    // Under the shown batch D; memory_read's first hit is a transcript holding it.
    scoreQuestion({
      conversationId: 'c',
      question: question('q2'),
      evidenceIds: ['m3'],
      verbatim,
      summarized,
      promptText: '',
      hits: [new Set(['m3'])],
      ...unread,
    }),
    // Half live, half under P (not shown); memory_read finds P second. The archived evidence lies in batch A.
    scoreQuestion({
      conversationId: 'c',
      question: question('q3', { answer: 'Paris in May 2023', category: 'temporal' }),
      evidenceIds: ['m0', 'm4'],
      verbatim,
      summarized,
      promptText: 'Ana: see you',
      hits: [coverage.get('D')!, coverage.get('P')!],
      coveringText: A.content,
      ...unread,
    }),
    // Archived, not shown, not found.
    scoreQuestion({
      conversationId: 'c',
      question: question('q4', { adversarial: true, answer: 'nothing' }),
      evidenceIds: ['m1'],
      verbatim,
      summarized,
      promptText: '',
      hits: [],
      coveringText: A.content,
      ...unread,
    }),
  ];

  it('scores each question', () => {
    expect(outcomes.map((o) => [o.strict, o.lenient, o.verbatim, o.rank])).toEqual([
      [true, true, true, null],
      [true, true, false, 1],
      [false, true, false, 2],
      [false, false, false, null],
    ]);
    // "Paris in May 2023" -> paris, may, 2023 ("in" is a function word); batch A holds paris and 2023.
    expect(outcomes[2]!.retention).toBeCloseTo(2 / 3, 10);
    expect(outcomes[2]!.promptRetention).toBe(0);
    // Adversarial questions are not measured for retention.
    expect(outcomes[3]!.retention).toBeNull();
    expect(outcomes[3]!.promptRetention).toBeNull();
  });

  it('aggregates: survival, recall@k, MRR, availability', () => {
    const m = aggregate(outcomes);
    expect(m).toMatchObject({
      questions: 4,
      survivalStrict: 0.5,
      survivalLenient: 0.75,
      survivalVerbatim: 0.25,
      recallAt1: 0.25,
      recallAt5: 0.5,
      recallAt10: 0.5,
      retentionMeasured: 1,
    });
    expect(m.mrr).toBeCloseTo((1 + 1 / 2) / 4, 10);
    // q1, q2 survive; q3 does not but memory_read finds it at rank 2; q4 neither.
    expect(m.availability).toBe(0.75);
    // Verbatim only q1 survives; q2 (rank 1) and q3 (rank 2) are found.
    expect(m.availabilityVerbatim).toBe(0.75);
    expect(m.answerRetention).toBeCloseTo(2 / 3, 10);
  });

  it('reports all, then each category', () => {
    const byCategory = aggregateByCategory(outcomes);
    expect(Object.keys(byCategory)).toEqual(['all', 'non-adversarial', 'single-hop', 'temporal']);
    expect(byCategory['non-adversarial']!.questions).toBe(3);
    expect(byCategory.temporal!.questions).toBe(1);
  });
});

describe('answer tokens', () => {
  it('normalizes like SQuAD and drops function words', () => {
    expect(normalizedTokens('The Eiffel Tower, in Paris!')).toEqual(['eiffel', 'tower', 'paris']);
    expect(normalizedTokens('Café')).toEqual(['cafe']);
    expect(answerTokenRetention('the', 'anything')).toBeNull();
    expect(answerTokenRetention('7 May 2023', 'On 7 May, 2023 she went')).toBe(1);
  });
});

describe('baselines', () => {
  const tokens = [4, 3, 5, 2, 6];

  it('truncate-oldest keeps the newest whole messages that fit', () => {
    expect(truncateOldest(tokens, 8)).toEqual({ kept: [3, 4], promptTokens: 8, fits: true });
    expect(truncateOldest(tokens, 7)).toEqual({ kept: [4], promptTokens: 6, fits: true });
  });

  it('head+tail gives a quarter of the window to the oldest messages', () => {
    // Window 16: the head's 4 tokens take message 0; the other 12 take messages 4 and 3 (8), not 2 (13).
    expect(headAndTail(tokens, 16)).toEqual({ kept: [0, 3, 4], promptTokens: 12, fits: true });
  });

  it('no-compaction sends everything, or fails over the window', () => {
    expect(noCompaction(tokens, 20)).toEqual({ kept: [0, 1, 2, 3, 4], promptTokens: 20, fits: true });
    expect(noCompaction(tokens, 19)).toEqual({ kept: [], promptTokens: 20, fits: false });
  });

  it('counts `speaker: text` as chars/4, rounded up per message', () => {
    expect(referenceTokens('Ana: hi')).toBe(2);
  });

  it('scores a conversation: evidence outside the kept turns does not survive', () => {
    const texts = ['I went to Lisbon with my sister Ana', 'We ate grilled sardines by the port', 'Next week I start my new job at IBM'];
    const conversation: EvalConversation = {
      id: 'c',
      messages: texts.map((content) => ({ role: 'user', name: 'Ben', content })),
      turnIds: ['D1:1', 'D1:2', 'D1:3'],
      referenceLines: texts.map((text) => `Ben: ${text}`),
      questions: [question('0', { evidence: ['D1:1'], answer: 'Lisbon' }), question('1', { evidence: ['D1:3'], answer: 'at IBM' })],
    };
    // 40 characters a turn: 10 tokens; a 25-token window keeps the last two turns.
    const score = scoreBaseline(conversation, 'truncate-oldest', 25);
    expect(score.outcomes.map((o) => o.strict)).toEqual([false, true]);
    expect(score.outcomes.map((o) => o.promptRetention)).toEqual([0, 1]);
    expect(score).toMatchObject({ promptTokens: 20, rawTokens: 30, fits: true });
  });
});
