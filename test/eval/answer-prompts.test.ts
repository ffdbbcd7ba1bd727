/** The answer-accuracy prompts and the history the answer model reads, pure. */
import { describe, expect, it } from 'vitest';
import { answerSystemPrompt, judgePrompt, judgeRuleOf, readVerdict } from '../../src/eval/answer-accuracy/answer-prompts.js';
import { datedChatMessages, truncatedHistory } from '../../src/eval/answer-accuracy/history-messages.js';
import type { EvalQuestion } from '../../src/eval/eval-types.js';

const question = (category: string, adversarial = false, answer: string | undefined = 'x'): EvalQuestion => ({
  id: 'q',
  question: 'What?',
  ...(answer !== undefined ? { answer } : {}),
  evidence: ['t'],
  category,
  adversarial,
});

describe('judging rules', () => {
  it("picks LongMemEval's rule by question type, abstention first, the generic one for anything else", () => {
    expect(judgeRuleOf(question('temporal-reasoning'))).toBe('temporal');
    expect(judgeRuleOf(question('knowledge-update'))).toBe('knowledge-update');
    expect(judgeRuleOf(question('single-session-preference'))).toBe('preference');
    expect(judgeRuleOf(question('temporal-reasoning', true))).toBe('abstention');
    expect(judgeRuleOf(question('multi-hop'))).toBe('generic');
    expect(judgeRuleOf(question('single-session-user'))).toBe('generic');
  });

  it('says each rule in the prompt, with the reference (a rubric for preferences)', () => {
    const prompt = (q: EvalQuestion) => judgePrompt({ question: q, response: 'It was 18 days.' });
    expect(prompt(question('temporal-reasoning', false, '19 days'))).toContain('differs from the reference by one counts as correct');
    expect(prompt(question('knowledge-update'))).toContain('even if it also mentions what was true before');
    expect(prompt(question('single-session-preference', false, 'suggest a comedy special'))).toContain('Rubric: suggest a comedy special');
    expect(prompt(question('adversarial', true, undefined))).toContain('Say yes when the response says it cannot answer');
    expect(prompt(question('multi-hop'))).not.toMatch(/differs from the reference by one|Rubric/);
    expect(prompt(question('multi-hop'))).toContain('Response: It was 18 days.');
  });

  it('reads yes or no from the first word, ignoring case and markup', () => {
    expect(readVerdict('Yes.')).toBe(true);
    expect(readVerdict('**no**, it gives 2')).toBe(false);
    expect(readVerdict('  YES')).toBe(true);
    expect(readVerdict('The answer is yes')).toBeUndefined();
    expect(readVerdict('')).toBeUndefined();
  });

  it('offers memory_read and the date only when there are', () => {
    expect(answerSystemPrompt({ withTool: false })).not.toContain('memory_read');
    expect(answerSystemPrompt({ withTool: true, askedAt: '2023-05-30T23:40:00.000Z' })).toMatch(/call memory_read[\s\S]*Today is 2023-05-30 23:40 \(UTC\)\./);
  });
});

describe('the history the answer model reads', () => {
  const messages = [
    { role: 'user' as const, content: 'first', createdAt: '2024-03-01T10:00:00.000Z' },
    { role: 'assistant' as const, content: 'same minute', createdAt: '2024-03-01T10:00:30.000Z' },
    { role: 'user' as const, content: 'next day', createdAt: '2024-03-02T08:15:00.000Z' },
    { role: 'assistant' as const, content: 'reply', createdAt: '2024-03-02T08:15:00.000Z' },
  ];

  it('dates a message when its time differs from the one before, and leaves memfold notes as they are', () => {
    const shown = datedChatMessages([{ role: 'system', content: '[Context Summary]', kind: 'clip_archive' }, ...messages]);
    expect(shown.map((m) => m.content)).toEqual(['[Context Summary]', '[2024-03-01 10:00] first', 'same minute', '[2024-03-02 08:15] next day', 'reply']);
  });

  it("sends a speaker's name in the form the API accepts, and none that has no letter or digit", () => {
    const shown = datedChatMessages([
      { role: 'user', content: 'hi', name: 'Ana María' },
      { role: 'assistant', content: 'yo', name: 'Bo' },
      { role: 'user', content: '?', name: '…' },
    ]);
    expect(shown.map((m) => ('name' in m ? m.name : undefined))).toEqual(['Ana_Mar_a', 'Bo', undefined]);
  });

  it('keeps the newest whole messages within the budget, the first kept one dated', () => {
    const all = truncatedHistory(messages, 10_000);
    expect(all.dropped).toBe(0);
    const newest = truncatedHistory(messages, 20);
    expect(newest.messages.map((m) => m.content)).toEqual(['[2024-03-02 08:15] reply']);
    expect(newest.dropped).toBe(3);
    expect(newest.tokens).toBeLessThanOrEqual(20);
  });
});
