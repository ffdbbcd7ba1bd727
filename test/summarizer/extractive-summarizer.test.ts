import { describe, expect, it } from 'vitest';
import { renderTranscript } from '../../src/compaction/format/transcript-format.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import { MAX_FOLD_SHARE, summarizeExtractive } from '../../src/summarizer/extractive/extractive-summary.js';
import { splitSentences } from '../../src/summarizer/extractive/sentences.js';
import { condense } from '../../src/summarizer/extractive/condense.js';
import type { SummarizeRequest } from '../../src/summarizer/summarizer.js';
import { describeWithSharedData } from '../support/shared-data.js';
import { linesOf, locomoSessions, tauRun } from './extractive-data.js';
import { figures, summarizeSessions } from './locomo-retention.js';

const at = (minute: number) => new Date(Date.UTC(2024, 2, 15, 9, minute)).toISOString(); // Friday 2024-03-15

const filler = Array.from({ length: 30 }, (_, i) => ({
  role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant',
  content: `Okay, that sounds good to me and I think we can keep going with the work for now, thanks a lot ${i % 3 ? 'really' : 'again'}.`,
  createdAt: at(10 + i),
}));

const planted = renderTranscript([
  { role: 'user', name: 'Priya', content: 'Can you fix the flaky login test? I met Jonathan Okafor yesterday about it.', createdAt: at(0) },
  ...filler.slice(0, 10),
  { role: 'assistant', content: 'The invoice total is $4,870.25 for order 99321.', createdAt: at(1) },
  ...filler.slice(10, 20),
  {
    role: 'assistant',
    content: 'Running the suite.',
    toolCalls: [{ id: 'c1', type: 'function', function: { name: 'run_tests', arguments: '{"path":"src/auth/login.test.ts","retries":3}' } }],
    createdAt: at(2),
  },
  {
    role: 'tool',
    name: 'run_tests',
    toolCallId: 'c1',
    content: 'TypeError: Cannot read properties of undefined (reading token) at src/auth/session.ts:42',
    createdAt: at(3),
  },
  ...filler.slice(20),
  { role: 'assistant', content: 'We decided to pin node 20.11 in CI. TODO: rotate the staging API key.', createdAt: at(4) },
]);

const req = (transcript: string, maxOutputTokens: number, previous?: string): SummarizeRequest => ({
  purpose: 'fold',
  lines: linesOf(transcript),
  maxOutputTokens,
  ...(previous ? { previousSummary: previous } : {}),
});

describe('extractive summarizer', () => {
  const model = createExtractiveSummarizer();

  it('is a Summarizer with id extractive and no practical window', () => {
    expect(model.id).toBe('extractive');
    expect(model.contextWindow).toBe(Number.POSITIVE_INFINITY);
  });

  it('keeps a planted name, number, date, file path and error line, under section headings', async () => {
    const { text, usage, model: who } = await model.summarize(req(planted, 300));
    expect(who).toBe('extractive');
    expect(text).toContain('Jonathan Okafor');
    expect(text).toContain('$4,870.25');
    expect(text).toContain('yesterday (14 March 2024)');
    expect(text).toContain('src/auth/login.test.ts');
    expect(text).toMatch(/Errors:\n- \[2024-03-15\] run_tests result: TypeError: Cannot read properties of undefined/);
    expect(text).toMatch(/^User asked:\n- \[2024-03-15\] Priya: /);
    expect(text).toContain('Decisions:');
    expect(text).toMatch(/Open items:\n.*TODO: rotate the staging API key\./);
    expect(text).not.toMatch(/thanks a lot/);
    expect(usage.outputTokens).toBe(Math.ceil(text.length / 4));
    expect(usage.inputTokens).toBeGreaterThan(usage.outputTokens);
  });

  it('is deterministic', async () => {
    const a = await model.summarize(req(planted, 200));
    const b = await createExtractiveSummarizer().summarize(req(planted, 200));
    expect(a.text).toBe(b.text);
  });

  it.each([16, 40, 100, 300])('stays within maxOutputTokens = %i', async (max) => {
    const { text } = await model.summarize(req(planted, max));
    expect(text.length).toBeGreaterThan(0);
    expect(Math.ceil(text.length / 4)).toBeLessThanOrEqual(max);
  });

  it('writes only the sections that have content', async () => {
    const chat = renderTranscript([
      { role: 'user', name: 'Ana', content: 'My sister Lucia moved to Porto in 2021.', createdAt: at(0) },
      { role: 'assistant', name: 'Ben', content: 'Porto has great tiles and the Douro river.', createdAt: at(1) },
    ]);
    const { text } = await model.summarize(req(chat, 200));
    expect(text.startsWith('Facts:\n')).toBe(true);
    for (const heading of ['User asked:', 'Files and tools:', 'Errors:', 'Decisions:', 'Open items:']) expect(text).not.toContain(heading);
  });

  it('skips what the previous summary already says', async () => {
    const chat = renderTranscript([
      { role: 'user', name: 'Ana', content: 'My sister Lucia moved to Porto in 2021.', createdAt: at(0) },
      { role: 'user', name: 'Ana', content: 'Her cat Miso turned 7 in March.', createdAt: at(1) },
    ]);
    const fresh = await model.summarize(req(chat, 200));
    expect(fresh.text).toContain('Lucia');
    const again = await model.summarize(req(chat, 200, 'Facts:\n- [2024-03-15] Ana: sister Lucia moved to Porto in 2021'));
    expect(again.text).not.toContain('Lucia');
    expect(again.text).toContain('Miso');
  });

  it('re-summarizes earlier summaries as plain text, keeping their sections, dates and speakers', async () => {
    const first = summarizeExtractive(req(planted, 300));
    const batch = `[depth:0|start:2024-03-15T09:00:00.000Z|end:2024-03-15T09:40:00.000Z|count:35]\n${first}`;
    const again = summarizeExtractive({ purpose: 'resummarize', summaries: [batch, batch.replace(/2024-03-15/g, '2024-03-16')], maxOutputTokens: 150 });
    expect(again).not.toContain('[depth:');
    expect(again).toMatch(/^\w[\w ]*:\n- \[2024-03-1[56]\] /);
    expect(Math.ceil(again.length / 4)).toBeLessThanOrEqual(150);
    expect(again).toContain('Errors:');
  });

  it('writes sentences: speaker named, relative dates resolved, filler dropped, one line per run of a speaker', () => {
    const chat = renderTranscript([
      { role: 'user', name: 'Ana', content: 'Wow, I think my sister Lucia moved to Porto yesterday!', createdAt: at(0) },
      { role: 'user', name: 'Ana', content: 'She starts at the Douro Museum next week.', createdAt: at(1) },
      { role: 'assistant', name: 'Ben', content: "That's great, Ana! My cousin Tomas bought a boat in Lisbon last month.", createdAt: at(2) },
      { role: 'user', name: 'Ana', content: 'Does Tomas sail the boat to the Azores?', createdAt: at(3) },
    ]);
    const text = summarizeExtractive(req(chat, 200));
    const lines = text.split('\n');
    expect(lines[0]).toBe('Facts:');
    expect(lines[1]).toBe(
      '- [2024-03-15] Ana: My sister Lucia moved to Porto yesterday (14 March 2024)! She starts at the Douro Museum next week (week of 18 March 2024).',
    );
    // Same day: the date is not repeated; Ben's line names him and drops the vocative reaction's filler.
    expect(lines[2]).toMatch(/^- Ben: (?:That's great! )?My cousin Tomas bought a boat in Lisbon last month \(February 2024\)\.$/);
    for (const line of lines.filter((l) => l.startsWith('- '))) expect(line).toMatch(/[.!?]$/);
  });

  it('re-summarizes into whole lines: no cut notes, dates and speakers kept, within budget', () => {
    const first = summarizeExtractive(req(planted, 300));
    const cut = `${first.slice(0, Math.floor(first.length * 0.6))}\n[... cut for the summarizer; the full text is archived verbatim]`;
    const nextDay = renderTranscript([
      {
        role: 'user',
        name: 'Priya',
        content: 'The vendor Meridian Labs quoted 12,400 EUR for the audit.',
        createdAt: new Date(Date.UTC(2024, 2, 16, 9)).toISOString(),
      },
      { role: 'assistant', content: 'Noted: the audit starts on 2 April with Meridian Labs.', createdAt: new Date(Date.UTC(2024, 2, 16, 10)).toISOString() },
    ]);
    const batches = [first, cut, summarizeExtractive(req(nextDay, 100))].map(
      (text, i) => `[depth:0|start:2024-03-1${5 + i}T09:00:00.000Z|end:2024-03-1${5 + i}T09:40:00.000Z|count:35]\n${text}`,
    );
    for (const max of [40, 80, 150, 400]) {
      const merged = summarizeExtractive({ purpose: 'resummarize', summaries: batches, maxOutputTokens: max });
      expect(merged.length).toBeLessThanOrEqual(max * 4);
      expect(merged).not.toMatch(/\[\.\.\.|\[depth:/);
      for (const line of merged.split('\n')) expect(line).toMatch(/^$|^[A-Z][\w ]*:$|^- (?:\[\d{4}-\d{2}-\d{2}\] )?[^:\n]+: \S/);
    }
    const roomy = summarizeExtractive({ purpose: 'resummarize', summaries: batches, maxOutputTokens: 400 });
    expect(roomy).toContain('[2024-03-16]');
    expect(roomy).toContain('Priya: ');
    expect(roomy).toContain('Jonathan Okafor');
    expect(roomy).toContain('Meridian Labs');
  });

  it('never answers empty text, even for an empty request', async () => {
    const { text } = await model.summarize({ purpose: 'fold', lines: [], maxOutputTokens: 50 });
    expect(text).toBe('(nothing to summarize)');
  });

  it('rejects an aborted request', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(model.summarize({ ...req(planted, 100), signal: controller.signal })).rejects.toThrow(/aborted/);
  });

  it('keeps reservation ids and amounts from τ-bench tool output', () => {
    const transcript = tauRun(0);
    const text = summarizeExtractive(req(transcript, 1024));
    expect(Math.ceil(text.length / 4)).toBeLessThanOrEqual(1024);
    const toolsAndFacts = text
      .split(/\n\n/)
      .filter((b) => /^(Files and tools|Facts):/.test(b))
      .join('\n');
    expect(toolsAndFacts).toContain('HATHAT');
    expect(toolsAndFacts).toMatch(/call book_reservation\(user_id=mia_li_3668/);
    expect(toolsAndFacts).toContain('certificate_7504069');
    expect(toolsAndFacts).toMatch(/amount=55\b/); // the card's share, first seen in the booking result
    expect(text).toMatch(/Errors:\n.*payment amount does not add up, total price is 305, but paid 255/);
  });
});

describe('summary size', () => {
  it('keeps a small chunk to at most 40% of what it read, however large the budget', () => {
    const lines = Array.from({ length: 12 }, (_, i) => ({
      time: '2024-05-15T10:00:00.000Z',
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      text: `Turn ${i}: the order ORD-${500 + i} ships to Lisbon on Friday, and the invoice total is ${100 + i} euros.`,
    }));
    const read = lines.reduce((sum, l) => sum + l.time.length + l.role.length + l.text.length + 5, 0);
    const text = summarizeExtractive({ purpose: 'fold', lines, maxOutputTokens: 4_000 });
    expect(text.length).toBeLessThanOrEqual(Math.ceil(read * MAX_FOLD_SHARE));
    expect(text.length).toBeGreaterThan(read * MAX_FOLD_SHARE * 0.6);
    // A large budget of a large chunk is the budget: the share only bounds small chunks.
    const long = Array.from({ length: 40 }, () => lines).flat();
    expect(summarizeExtractive({ purpose: 'fold', lines: long, maxOutputTokens: 200 }).length).toBeLessThanOrEqual(800);
  });
});

describe('sentences and condensing', () => {
  it('splits sentences but not numbers, paths, abbreviations or list markers', () => {
    expect(splitSentences('Dr. Smith paid $3.50 for src/a.ts today. Then he left! Did he? 1. Economy')).toEqual([
      'Dr. Smith paid $3.50 for src/a.ts today.',
      'Then he left!',
      'Did he?',
      '1. Economy',
    ]);
  });

  it('drops openers, hedges, intensifiers and vocatives but keeps the sentence, its names, negations, numbers and paths', () => {
    expect(condense('I think it was really so nice that you know, Super Bowl tickets cost $200.')).toBe('It was nice that Super Bowl tickets cost $200.');
    expect(condense("Wow, I don't want to fly before 11 AM.")).toBe("I don't want to fly before 11 AM.");
    expect(condense('Just open the file at ./src/index.ts')).toBe('Open the file at ./src/index.ts');
    // Where the words are the sentence's own, they stay.
    for (const kept of ['Do you know Ana?', 'I think about her every day.', "It's not just fun.", 'What kind of music do you like?'])
      expect(condense(kept)).toBe(kept);
    expect(condense('Thanks, Mel! That necklace is from my grandma in Sweden, Mel!', new Set(['mel']))).toBe('That necklace is from my grandma in Sweden!');
  });
});

describeWithSharedData('extractive summarizer on LoCoMo', () => {
  it('summarizes a real LoCoMo session within 1/3.5 of its tokens, with dates resolved', () => {
    const { sessions } = locomoSessions(0);
    const session = sessions.get(1)!;
    const budget = Math.floor(Math.ceil(session.transcript.length / 4) / 3.5);
    const text = summarizeExtractive(req(session.transcript, budget));
    expect(Math.ceil(text.length / 4)).toBeLessThanOrEqual(budget);
    expect(text.length).toBeGreaterThan(budget * 4 * 0.8);
    expect(text).toMatch(/^Facts:\n- \[2023-05-08\] (?:Caroline|Melanie): /);
    expect(text).toMatch(/^- Caroline: /m);
    expect(text).toContain('I went to a LGBTQ support group yesterday (7 May 2023)');
    expect(text).toContain('last year (2022)');
  });

  it('keeps over .70 of answer tokens at 3.5x or more, well above the session summaries LoCoMo ships', () => {
    // Measured .711 at 3.53x over the ten conversations (test/bench/extractive-quality.ts); the telegraphic summaries before: .668.
    const all = Array.from({ length: 10 }, (_, i) => i);
    const f = figures(all, false);
    expect(f.questions).toBeGreaterThan(1500);
    expect(f.compression).toBeGreaterThanOrEqual(3.5);
    expect(f.retention).toBeGreaterThanOrEqual(0.7);
    expect(f.retention).toBeGreaterThan(f.reference + 0.2);
  });

  it('stays within budget on every session, and when the summaries of a conversation are merged', () => {
    for (const c of [0, 5]) {
      const { sessions } = locomoSessions(c);
      const { summaries } = summarizeSessions(c, true);
      for (const [s, text] of summaries) {
        const budget = Math.floor(Math.ceil(sessions.get(s)!.transcript.length / 4) / 3.5);
        expect(text.length).toBeLessThanOrEqual(budget * 4);
      }
      const batches = [...summaries.values()].map((text, i) => `[depth:0|start:${i}|end:${i}|count:20]\n${text}`);
      const merged = summarizeExtractive({ purpose: 'resummarize', summaries: batches, maxOutputTokens: 1000 });
      expect(merged.length).toBeLessThanOrEqual(4000);
      expect(merged.length).toBeGreaterThan(3000);
      expect(merged).not.toMatch(/\[\.\.\.|\[depth:/);
    }
  });
});
