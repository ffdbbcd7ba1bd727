/**
 * The readable metrics on hand-checked cases: an evidence turn counts only when its own words (a 120-character
 * stretch of it from a word, or the whole of a shorter turn, whitespace aside) are there to read; a summary of it,
 * or a display that cuts it off, earns nothing.
 */
import { describe, expect, it } from 'vitest';
import type { ArchiveEntry, ConversationMessage } from '../../src/conversation/types.js';
import { renderTranscript } from '../../src/compaction/format/transcript-format.js';
import { bm25WindowsAnswer, bm25WindowsIndex } from '../../src/eval/bm25-windows.js';
import type { EvalQuestion } from '../../src/eval/eval-types.js';
import { aggregate, aggregateByCategory, scoreQuestion } from '../../src/eval/metrics.js';
import { EMPTY_VIEW, evidenceSnippet, isReadable, readablePosition, readableView, scoreReadable, toolTokens } from '../../src/eval/readable.js';
import { entryExcerpt } from '../../src/tools/memory-read-search.js';

const LONG =
  'I finally finished the pottery class on Saturday and the bowl I made came out a lovely shade of blue, which I am going to give to my sister for her birthday next month.';

describe('evidence snippet', () => {
  it('is the first 120 characters with whitespace runs as one space', () => {
    expect(evidenceSnippet('  Hello\n\n   world\t!  ')).toBe('Hello world !');
    expect(evidenceSnippet(LONG)).toBe(LONG.slice(0, 120).trim());
    expect(evidenceSnippet(LONG)).toHaveLength(120);
  });
});

describe('readable: a 120-character stretch from a word, or the whole short turn', () => {
  const TURN = `${LONG} She will put it on the shelf beside the old clock that our grandmother left us many years ago.`;
  const MIDDLE_AT = TURN.indexOf('the bowl');

  it('an excerpt of a long message counts, where the first-120 probe does not', () => {
    const excerpt = TURN.slice(MIDDLE_AT);
    expect(excerpt.length).toBeGreaterThan(120);
    const view = readableView(`[Sat 3 Jun 2023 10:00] user: … ${excerpt}`);
    expect(isReadable(view, TURN)).toBe(true);
    expect(scoreReadable([TURN], undefined, view)).toMatchObject({ evidence: 1, evidencePrefix: 0 });
  });

  it('the stretch must start at a word of the turn', () => {
    // From the second letter of "the bowl", exactly 121 characters: no window starting at a word fits inside.
    const midWord = TURN.slice(MIDDLE_AT + 1, MIDDLE_AT + 1 + 121);
    // Shown between other words, so that a space at either end is kept.
    const shown = (text: string) => readableView(`>> ${text}<<`);
    expect(isReadable(shown(midWord), TURN)).toBe(false);
    expect(isReadable(shown(TURN.slice(MIDDLE_AT, MIDDLE_AT + 120)), TURN)).toBe(true);
    expect(isReadable(shown(TURN.slice(MIDDLE_AT, MIDDLE_AT + 119)), TURN)).toBe(false);
  });

  it('a turn of 120 characters or fewer must appear whole', () => {
    const short = 'We went to Lisbon in June and stayed near the river.';
    expect(isReadable(readableView(`Ana: ${short} Then home.`), short)).toBe(true);
    expect(isReadable(readableView('We went to Lisbon in June and stayed'), short)).toBe(false);
    const exactly = LONG.slice(0, 120);
    expect(isReadable(readableView(`x ${exactly} y`), exactly)).toBe(true);
    expect(isReadable(readableView(exactly.slice(0, 119)), exactly)).toBe(false);
  });

  it('whitespace is normalized on both sides', () => {
    const spaced = TURN.replaceAll(' ', ' \n\t ');
    const view = readableView(`>>\n   ${TURN.slice(MIDDLE_AT).replaceAll(' ', '\n    ')}`);
    expect(isReadable(view, spaced)).toBe(true);
  });

  it('the position is where the turn is first readable (the earliest of its windows)', () => {
    const tail = TURN.slice(MIDDLE_AT);
    const text = `${'filler words here '.repeat(3)}${tail} and again ${TURN}`;
    const view = readableView(text);
    expect(readablePosition(view, TURN)).toBe(view.text.indexOf(tail));
    expect(readablePosition(view, 'not in there at all')).toBe(-1);
    expect(readablePosition(EMPTY_VIEW, TURN)).toBe(-1);
  });
});

describe('scoreReadable', () => {
  it('finds a turn verbatim whatever the indentation and line breaks around it', () => {
    const at = LONG.indexOf(' ', 60);
    const prompt = readableView(`[2023-05-08T13:56:00.000Z] user(Ana): ${LONG.slice(0, at)}\n      ${LONG.slice(at + 1)}`);
    expect(scoreReadable([LONG], undefined, prompt)).toMatchObject({ evidence: 1, evidenceAll: true, evidenceInPrompt: 1, evidenceInTool: 0 });
  });

  it('gives a summary of the turn nothing, and counts the turn in the tool answer alone', () => {
    const summary = readableView('Ana finished a pottery class and made a blue bowl for her sister.');
    const tool = readableView(`#1 transcript | t | ...\n  user(Ana): ${LONG}`);
    expect(scoreReadable([LONG], undefined, summary).evidence).toBe(0);
    expect(scoreReadable([LONG], undefined, summary, tool)).toMatchObject({ evidence: 1, evidenceInPrompt: 0, evidenceInTool: 1 });
  });

  it('counts a turn cut before its 120th character as not readable, one cut after as readable', () => {
    expect(scoreReadable([LONG], undefined, readableView(LONG.slice(0, 119))).evidence).toBe(0);
    expect(scoreReadable([LONG], undefined, readableView(LONG.slice(0, 120))).evidence).toBe(1);
  });

  it('averages over evidence turns: one of two readable is 0.5, and not every turn', () => {
    const score = scoreReadable([LONG, 'We went to Lisbon in June.'], undefined, readableView('we went to Lisbon in June.'), readableView(LONG));
    // The check is case-sensitive: "we went" is not "We went".
    expect(score).toMatchObject({ evidence: 0.5, evidenceAll: false });
  });

  it('a turn without text is never readable', () => {
    expect(scoreReadable(['   '], undefined, readableView('anything at all')).evidence).toBe(0);
  });

  it('answer words: the share of the answer’s normalized tokens in prompt or tool answer', () => {
    // "7 May 2023" -> 7, may, 2023: the prompt holds "may", the tool answer "2023".
    const score = scoreReadable([], '7 May 2023', readableView('in May we met'), readableView('back in 2023'));
    expect(score.answer).toBeCloseTo(2 / 3, 10);
    expect(scoreReadable([], undefined, EMPTY_VIEW).answer).toBeNull();
  });
});

describe('a display that cuts a segment short', () => {
  const messages: ConversationMessage[] = Array.from({ length: 40 }, (_, i) => ({
    id: `m${i}`,
    conversationId: 'c',
    seq: i + 1,
    role: i % 2 === 0 ? 'user' : 'assistant',
    name: i % 2 === 0 ? 'Ana' : 'Ben',
    content: i === 30 ? LONG : `Message number ${i} is about nothing much, a filler line of ordinary small talk.`,
    createdAt: '2023-05-08T13:56:00.000Z',
  }));
  const segment: ArchiveEntry = {
    kind: 'transcript',
    label: 't1',
    conversationId: 'c',
    depth: 0,
    start: messages[0]!.createdAt,
    end: messages[39]!.createdAt,
    count: 40,
    content: renderTranscript(messages),
    sourceIds: messages.map((m) => m.id),
    operationId: 'op',
    messages,
  };

  it('evidence past the 2,000-character cut of a segment shown from its head is not readable', () => {
    expect(segment.content.indexOf(LONG)).toBeGreaterThan(2_000);
    const cut = entryExcerpt(segment, 2_000);
    expect(scoreReadable([LONG], undefined, EMPTY_VIEW, readableView(cut)).evidence).toBe(0);
    expect(scoreReadable([LONG], undefined, EMPTY_VIEW, readableView(entryExcerpt(segment, 10_000))).evidence).toBe(1);
  });
});

describe('readable aggregates', () => {
  const question = (id: string, extra: Partial<EvalQuestion> = {}): EvalQuestion => ({
    id,
    question: id,
    evidence: ['x'],
    category: 'single-hop',
    adversarial: false,
    ...extra,
  });
  const outcome = (id: string, texts: string[], tool: string, extra: Partial<EvalQuestion> = {}) =>
    scoreQuestion({
      conversationId: 'c',
      question: question(id, extra),
      evidenceIds: texts.map((_, i) => `e${i}`),
      verbatim: new Set(),
      promptText: '',
      evidenceTexts: texts,
      prompt: readableView('Ben: I like tea.'),
      tool: { view: readableView(tool), tokens: toolTokens(tool) },
    });
  const outcomes = [
    outcome('q1', ['I like tea.'], 'x'.repeat(40), { answer: 'tea' }),
    outcome('q2', ['We met in Rome.', 'It rained.'], 'We met in Rome. '.repeat(5), { answer: 'Rome, in the rain', category: 'multi-hop' }),
    outcome('q3', ['Nothing here.'], 'y'.repeat(400), { adversarial: true, category: 'adversarial' }),
  ];

  it('means per question, every-turn share, answer words over answered questions, tool tokens mean and p90', () => {
    const m = aggregate(outcomes);
    // q1: 1 (prompt); q2: 1 of 2; q3: 0.
    expect(m.readableEvidence).toBeCloseTo(0.5, 10);
    expect(m.readableEvidenceAll).toBeCloseTo(1 / 3, 10);
    expect(m.evidenceInPrompt).toBeCloseTo(1 / 3, 10);
    expect(m.evidenceInTool).toBeCloseTo(1 / 6, 10);
    // q1: tea 1; q2: rome, rain -> rome only: 0.5; q3 adversarial, no answer.
    expect(m.readableAnswer).toBeCloseTo(0.75, 10);
    // 10, 20, 100 tokens.
    expect(m.toolTokensMean).toBeCloseTo(130 / 3, 10);
    expect(m.toolTokensP90).toBe(100);
  });

  it('the headline group leaves adversarial questions out', () => {
    const byCategory = aggregateByCategory(outcomes);
    expect(Object.keys(byCategory)).toEqual(['all', 'non-adversarial', 'adversarial', 'multi-hop', 'single-hop']);
    expect(byCategory['non-adversarial']!.readableEvidence).toBeCloseTo(0.75, 10);
  });
});

describe('bm25-windows baseline', () => {
  const texts = [
    'Good morning! How was your weekend?',
    'It was fine, I mostly stayed home.',
    'Did you end up adopting the puppy?',
    'Yes! We named him Biscuit, he is a beagle.',
    'That is wonderful news.',
    'Work has been busy lately, lots of meetings.',
    'I hear you, my manager keeps scheduling calls.',
  ];
  const messages = texts.map((content, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    name: i % 2 === 0 ? 'Ana' : 'Ben',
    content,
    createdAt: '2023-05-08T10:00:00.000Z',
  }));
  const index = bm25WindowsIndex(messages);

  it('shows the best message with one neighbour each side, best first', () => {
    const answer = bm25WindowsAnswer(index, 'What is the name of the puppy Ben adopted?', 3_000);
    const first = answer.split('\n---\n')[0]!;
    expect(first).toContain('Did you end up adopting the puppy?');
    expect(first).toContain('We named him Biscuit');
    expect(first).toContain('That is wonderful news.');
  });

  it('stays within the budget', () => {
    const budget = index.items[2]!.tokens + index.items[3]!.tokens + index.items[4]!.tokens + 1;
    const answer = bm25WindowsAnswer(index, 'puppy adopted', budget);
    expect(answer.split('\n')).toHaveLength(3);
    expect(toolTokens(answer)).toBeLessThanOrEqual(budget);
    expect(bm25WindowsAnswer(index, 'puppy adopted', budget - 2)).toBe('');
  });
});
