/**
 * The offline summarizer: deterministic, no network, a few milliseconds per chunk. It reads the request
 * exactly as the compaction core builds it (the `<transcript>` of the last user message, and the
 * `<previous_summary>` to avoid repeating), keeps the sentences that carry the most names, numbers, dates
 * and rare words in telegraphic style with relative dates resolved, and writes them in the prompt's sections.
 */
import { PREVIOUS_SUMMARY_TAG, TRANSCRIPT_TAG, extractTagged } from '../../compaction/prompt.js';
import { parseTranscript } from '../../compaction/transcript-format.js';
import { InvalidArgumentError, MemfoldError } from '../../errors.js';
import type { Completion, CompletionRequest, ModelProvider } from '../model-provider.js';
import { renderSections, unitCost } from './render.js';
import { selectUnits } from './selection.js';
import { unitsFromPlainText, unitsFromTranscript, type Unit } from './units.js';

export const EXTRACTIVE_MODEL_ID = 'extractive';

/** Said when the request holds nothing to summarize (a summarizer never returns empty text). */
export const NOTHING_TO_SUMMARIZE = '(nothing to summarize)';

/** Token estimate used for the budget and usage: ceil(chars / 4). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export interface ExtractiveInput {
  /** Transcript text (renderTranscript form) or earlier summaries as plain text. */
  transcript: string;
  previousSummary?: string;
  maxOutputTokens: number;
}

/** Cut `text` to at most `maxChars`, at a line (else a word) boundary. */
function fit(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const line = cut.lastIndexOf('\n');
  if (line > maxChars / 2) return cut.slice(0, line).trimEnd();
  const space = cut.lastIndexOf(' ');
  return (space > 0 ? cut.slice(0, space) : cut).trimEnd();
}

/** The pure summarization step: same input, same output. */
export function summarizeExtractive(input: ExtractiveInput): string {
  const maxChars = input.maxOutputTokens * 4;
  const lines = parseTranscript(input.transcript);
  const units: Unit[] = lines.length > 0 ? unitsFromTranscript(lines) : unitsFromPlainText(input.transcript);
  const { chosen } = selectUnits(units, maxChars, unitCost, input.previousSummary);
  let text = renderSections(chosen);
  if (text === '') {
    // Nothing fit whole (a tiny budget): keep the start of the most informative unit.
    const best = [...units].sort((a, b) => b.words.size - a.words.size || a.order - b.order)[0];
    text = best ? best.text : '';
  }
  text = fit(text, maxChars);
  return text === '' ? fit(NOTHING_TO_SUMMARIZE, maxChars) || '-' : text;
}

/** The fold request's parts: the transcript (or the whole message when untagged) and the summary so far. */
export function readRequest(request: CompletionRequest): { transcript: string; previousSummary?: string } {
  const last = [...request.messages].reverse().find((m) => m.role === 'user');
  const content = last?.content ?? '';
  const transcript = extractTagged(content, TRANSCRIPT_TAG) ?? content;
  const previousSummary = extractTagged(content, PREVIOUS_SUMMARY_TAG);
  return previousSummary === undefined ? { transcript } : { transcript, previousSummary };
}

export function createExtractiveSummarizer(): ModelProvider {
  return {
    id: EXTRACTIVE_MODEL_ID,
    contextWindow: Number.POSITIVE_INFINITY,
    // Usage is chars/4, not a tokenizer's count: token estimators must not calibrate on it.
    estimatesUsage: true,
    async complete(request): Promise<Completion> {
      if (request.signal?.aborted) {
        throw new MemfoldError('model_error', 'extractive: aborted', { cause: request.signal.reason, details: { reason: 'aborted' } });
      }
      if (!Number.isInteger(request.maxOutputTokens) || request.maxOutputTokens < 1) {
        throw new InvalidArgumentError('maxOutputTokens', `must be an integer >= 1 (got ${request.maxOutputTokens})`);
      }
      const { transcript, previousSummary } = readRequest(request);
      const text = summarizeExtractive({
        transcript,
        maxOutputTokens: request.maxOutputTokens,
        ...(previousSummary !== undefined ? { previousSummary } : {}),
      });
      const inputChars = request.system.length + request.messages.reduce((sum, m) => sum + m.content.length, 0);
      return {
        text,
        usage: { inputTokens: Math.ceil(inputChars / 4), outputTokens: estimateTokens(text) },
        model: EXTRACTIVE_MODEL_ID,
      };
    },
  };
}
