/** Scores of the baselines on one conversation at one window. Pure. */
import { baselinePrompt, referenceTokens, type BaselineName } from './baselines.js';
import type { NewMessage } from '../agent/types.js';
import type { EvalConversation, EvalQuestion } from './eval-types.js';
import { scoreQuestion, type QuestionOutcome } from './metrics.js';

export interface PromptCost {
  promptTokens: number;
  rawTokens: number;
}

export interface BaselineScore extends PromptCost {
  outcomes: QuestionOutcome[];
  /** False when the conversation exceeds the window and the baseline cannot cut it (no-compaction). */
  fits: boolean;
}

/** Positions of a question's evidence turns among the conversation's messages. */
export function evidenceIndexes(conversation: Pick<EvalConversation, 'turnIds'>, question: Pick<EvalQuestion, 'evidence'>): number[] {
  const wanted = new Set(question.evidence);
  return conversation.turnIds.flatMap((id, i) => (wanted.has(id) ? [i] : []));
}

/** A message as the prompt's text about it (answer retention reads this). */
export function promptLine(message: Pick<NewMessage, 'name' | 'role' | 'content'>): string {
  return `${message.name ?? message.role}: ${message.content}`;
}

export function scoreBaseline(conversation: EvalConversation, name: BaselineName, window: number): BaselineScore {
  const tokens = conversation.referenceLines.map(referenceTokens);
  const prompt = baselinePrompt(name, tokens, window);
  const verbatim = new Set(prompt.kept.map(String));
  const outcomes = conversation.questions.map((question) => {
    const evidence = evidenceIndexes(conversation, question);
    const promptText = evidence.filter((i) => verbatim.has(String(i))).map((i) => promptLine(conversation.messages[i]!)).join('\n');
    return scoreQuestion({ conversationId: conversation.id, question, evidenceIds: evidence.map(String), verbatim, promptText });
  });
  return { outcomes, fits: prompt.fits, promptTokens: prompt.promptTokens, rawTokens: tokens.reduce((s, t) => s + t, 0) };
}
