/** Scores of the baselines on one conversation at one window. Pure. */
import { baselinePrompt, baselineReuse, referenceTokens, type BaselineName } from './baselines.js';
import { assistantTurns, type PrefixReuse } from './cache-reuse.js';
import type { NewMessage } from '../conversation/types.js';
import type { EvalConversation, EvalQuestion } from './eval-types.js';
import { scoreQuestion, type QuestionOutcome } from './metrics.js';
import { bm25SentencesAnswer, bm25SentencesIndex } from './bm25-sentences.js';
import { bm25WindowsAnswer, bm25WindowsIndex } from './bm25-windows.js';
import { conversationCorpus, questionRetrieval } from './retrieval-metrics.js';
import { EMPTY_VIEW, readableView, toolTokens } from './readable.js';

export interface PromptCost {
  promptTokens: number;
  rawTokens: number;
}

export interface BaselineScore extends PromptCost {
  outcomes: QuestionOutcome[];
  /** False when the conversation exceeds the window and the baseline cannot cut it (no-compaction). */
  fits: boolean;
  /** Prompt-cache reuse of the baseline's prompt before each assistant message (none for the retrieval baselines). */
  reuse: PrefixReuse;
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
  const view = readableView(prompt.kept.map((i) => promptLine(conversation.messages[i]!)).join('\n'));
  const outcomes = conversation.questions.map((question) => {
    const evidence = evidenceIndexes(conversation, question);
    const promptText = evidence
      .filter((i) => verbatim.has(String(i)))
      .map((i) => promptLine(conversation.messages[i]!))
      .join('\n');
    const evidenceTexts = evidence.map((i) => conversation.messages[i]!.content);
    return scoreQuestion({ conversationId: conversation.id, question, evidenceIds: evidence.map(String), verbatim, promptText, evidenceTexts, prompt: view });
  });
  const reuse = baselineReuse(name, tokens, window, assistantTurns(conversation.messages));
  return { outcomes, fits: prompt.fits, promptTokens: prompt.promptTokens, rawTokens: tokens.reduce((s, t) => s + t, 0), reuse };
}

/** A retrieval baseline's answer to each question of a conversation, its index built once. */
type RetrievalAnswers = (conversation: EvalConversation) => (question: string) => string;

/** A retrieval baseline: no prompt at all, and for each question what the baseline answers within its budget. */
function scoreRetrievalBaseline(conversation: EvalConversation, answers: RetrievalAnswers): BaselineScore {
  const answerFor = answers(conversation);
  const corpus = conversationCorpus(conversation);
  const outcomes = conversation.questions.map((question) => {
    const evidence = evidenceIndexes(conversation, question);
    const answer = answerFor(question.question);
    const view = readableView(answer);
    const retrieval = questionRetrieval(corpus, question, view);
    return scoreQuestion({
      conversationId: conversation.id,
      question,
      evidenceIds: evidence.map(String),
      verbatim: new Set(),
      promptText: '',
      evidenceTexts: evidence.map((i) => conversation.messages[i]!.content),
      prompt: EMPTY_VIEW,
      tool: { view, tokens: toolTokens(answer) },
      ...(retrieval ? { retrieval } : {}),
    });
  });
  const rawTokens = conversation.referenceLines.reduce((s, line) => s + referenceTokens(line), 0);
  return { outcomes, fits: true, promptTokens: 0, rawTokens, reuse: { reusedTokens: 0, promptTokens: 0 } };
}

/**
 * The `bm25-windows` retrieval baseline: for each question the ±1-message windows a plain BM25 over every raw
 * message picks within `budget` tokens (the budget memory_read answers within).
 */
export function scoreBm25Windows(conversation: EvalConversation, budget: number): BaselineScore {
  return scoreRetrievalBaseline(conversation, (c) => {
    const index = bm25WindowsIndex(c.messages);
    return (question) => bm25WindowsAnswer(index, question, budget);
  });
}

/** The `bm25-sentences` retrieval baseline: sentences with one neighbouring sentence of their message, within `budget`. */
export function scoreBm25Sentences(conversation: EvalConversation, budget: number): BaselineScore {
  return scoreRetrievalBaseline(conversation, (c) => {
    const index = bm25SentencesIndex(c.messages);
    return (question) => bm25SentencesAnswer(index, question, budget);
  });
}
