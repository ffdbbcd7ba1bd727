/**
 * What the answer model and the judge are told, pure. The judging rules follow the kinds of question LongMemEval
 * distinguishes (its paper and evaluation code), written anew: an abstention must decline, a temporal answer may be a
 * day off on a count, a knowledge update counts when the newest value is given, a preference question is judged by
 * the rubric its reference describes. Every other question (LoCoMo's categories, your own) gets the generic rule.
 */
import type { EvalQuestion } from '../eval-types.js';

/** The most memory_read calls the answer model may make for one question. */
export const MAX_TOOL_CALLS = 3;

/** Which rule the judge applies to a question. */
export type JudgeRule = 'generic' | 'temporal' | 'knowledge-update' | 'preference' | 'abstention';

export function judgeRuleOf(question: Pick<EvalQuestion, 'category' | 'adversarial'>): JudgeRule {
  if (question.adversarial) return 'abstention';
  if (question.category === 'temporal-reasoning') return 'temporal';
  if (question.category === 'knowledge-update') return 'knowledge-update';
  if (question.category === 'single-session-preference') return 'preference';
  return 'generic';
}

/** The answer model's system prompt; `withTool` when memory_read is offered (memfold), `askedAt` the question's date. */
export function answerSystemPrompt(options: { withTool: boolean; askedAt?: string }): string {
  const lines = [
    'You are the assistant in the conversation that follows. Its last message is a question about the conversation itself.',
    'Answer it from what was said in the conversation. Be brief: give the answer, with a short reason only when it needs one.',
    'If the conversation does not hold what the question asks, say that you cannot tell from the conversation; do not guess.',
  ];
  if (options.withTool)
    lines.push(
      `Older parts of the conversation may have been archived out of view. When the answer is not in view, call memory_read to search them (at most ${MAX_TOOL_CALLS} calls), then answer.`,
    );
  if (options.askedAt) lines.push(`Today is ${options.askedAt.slice(0, 16).replace('T', ' ')} (UTC).`);
  return lines.join('\n');
}

const RULES: Record<JudgeRule, string> = {
  generic:
    'Say yes when the response gives the reference answer or something equivalent to it, or when it works through steps that reach it. ' +
    'Say no when it gives a different answer, only part of what the reference asks for, or no answer.',
  temporal:
    'Say yes when the response gives the reference answer or an equivalent one, or works through steps that reach it. ' +
    'A count of days, weeks or months that differs from the reference by one counts as correct (18 days for 19 is fine). ' +
    'Say no otherwise, or when it gives only part of the answer.',
  'knowledge-update':
    'The user’s information changed over the conversation; the reference is the latest value. Say yes when the response gives that latest value, ' +
    'even if it also mentions what was true before. Say no when it gives only an outdated value, a different one, or none.',
  preference:
    'The reference is a rubric: it describes what a good personalized response does with what the user said before. ' +
    'Say yes when the response draws on the user’s information correctly and satisfies the rubric; it need not cover every point. Say no otherwise.',
  abstention:
    'The question cannot be answered from the conversation (it asks about something never said, or mixes things up). ' +
    'Say yes when the response says it cannot answer, does not know, or that the conversation does not say. Say no when it gives an answer as if known.',
};

/** The judge's one message: the rule for the question's kind, then the material, then how to reply. */
export function judgePrompt(options: { question: EvalQuestion; response: string }): string {
  const { question, response } = options;
  const rule = judgeRuleOf(question);
  const reference = question.answer ?? (rule === 'abstention' ? '(none: the question cannot be answered from the conversation)' : '(none)');
  return [
    'You grade an assistant’s answer to a question about a past conversation.',
    RULES[rule],
    '',
    `Question: ${question.question}`,
    `${rule === 'preference' ? 'Rubric' : 'Reference answer'}: ${reference}`,
    `Response: ${response.trim() === '' ? '(empty)' : response}`,
    '',
    'Is the response correct? Reply with one word: yes or no.',
  ].join('\n');
}

/** The judge's verdict: its reply opens with yes or no (case, punctuation and markup ignored); anything else is undefined. */
export function readVerdict(reply: string): boolean | undefined {
  const word = /[a-z]+/i.exec(reply)?.[0]?.toLowerCase();
  if (word === 'yes') return true;
  if (word === 'no') return false;
  return undefined;
}
