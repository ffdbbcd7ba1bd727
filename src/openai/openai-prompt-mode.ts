/**
 * Which system prompt a request gets. `structured` (the default): every request the seven-section prompt, each
 * chunk summarized on its own with the summary so far as context (a delta). `update`: a fold request that carries a
 * summary so far asks the model to rewrite it with the new messages merged in (a running summary). Re-summarization
 * merges archived summaries with the structured prompt in both modes.
 */
import type { SummarizeRequest } from '../summarizer/summarizer.js';
import { DEFAULT_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT } from './openai-prompt.js';

export const SUMMARY_PROMPT_MODES = ['structured', 'update'] as const;

export type SummaryPromptMode = (typeof SUMMARY_PROMPT_MODES)[number];

export const DEFAULT_SUMMARY_PROMPT_MODE: SummaryPromptMode = 'structured';

export function isSummaryPromptMode(value: unknown): value is SummaryPromptMode {
  return typeof value === 'string' && (SUMMARY_PROMPT_MODES as readonly string[]).includes(value);
}

/** The rule an invalid mode breaks, for errors that name their field. */
export const SUMMARY_PROMPT_MODE_RULE = `must be ${SUMMARY_PROMPT_MODES.map((mode) => `'${mode}'`).join(' or ')}`;

/** The built-in template for `request` in `mode`; a custom template replaces it for every request. */
export function promptTemplateFor(mode: SummaryPromptMode, request: SummarizeRequest): string {
  const updating = mode === 'update' && request.purpose === 'fold' && Boolean(request.previousSummary);
  return updating ? UPDATE_SUMMARIZATION_PROMPT : DEFAULT_SUMMARIZATION_PROMPT;
}

/**
 * The longest built-in template a summarizer in `mode` may send: what the core counts against the summarizer's
 * window for every request (`Summarizer.promptOverhead`), so no request of either kind outgrows it.
 */
export function longestPromptTemplate(mode: SummaryPromptMode): string {
  if (mode === 'structured') return DEFAULT_SUMMARIZATION_PROMPT;
  return UPDATE_SUMMARIZATION_PROMPT.length >= DEFAULT_SUMMARIZATION_PROMPT.length ? UPDATE_SUMMARIZATION_PROMPT : DEFAULT_SUMMARIZATION_PROMPT;
}
