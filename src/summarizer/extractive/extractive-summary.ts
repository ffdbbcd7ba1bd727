/**
 * The extractive summary itself, pure: the units of the transcript (or of the summaries to merge) selected within the
 * budget and laid out in the default prompt's sections. Loaded by the summarizer's first call
 * (`extractive-summarizer.ts`), so importing memfold does not load the selection's modules.
 */
import type { SummarizeRequest, SummaryLine } from '../summarizer.js';
import { createLayout } from './render.js';
import { selectUnits } from './selection.js';
import { unitsFromPlainText, unitsFromTranscript, type Unit } from './units.js';
import { sliceWhole } from '../../conversation/well-formed-text.js';

/** Said when the request holds nothing to summarize (a summarizer never returns empty text). */
export const NOTHING_TO_SUMMARIZE = '(nothing to summarize)';

/** Cut `text` to at most `maxChars`, at a line (else a word) boundary. */
function fit(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = sliceWhole(text, 0, maxChars);
  const line = cut.lastIndexOf('\n');
  if (line > maxChars / 2) return cut.slice(0, line).trimEnd();
  const space = cut.lastIndexOf(' ');
  return (space > 0 ? cut.slice(0, space) : cut).trimEnd();
}

/**
 * A fold's summary takes at most this share of what it summarizes, so a small chunk gets a small summary instead of
 * filling `maxOutputTokens` with most of its own text (a summary of half its input summarizes little). Budgets of
 * larger chunks are far below it: at the default settings a chunk of 8,000 tokens gets 1,024.
 */
export const MAX_FOLD_SHARE = 0.4;
/** ...but never less room than this many characters: a short chunk still gets a line or two. */
const MIN_FOLD_CHARS = 240;

/** Characters a fold's summary may take: its budget, and no more than MAX_FOLD_SHARE of the lines as read. */
function foldChars(lines: readonly SummaryLine[], maxChars: number): number {
  const read = lines.reduce((sum, line) => sum + lineChars(line), 0);
  return Math.min(maxChars, Math.max(MIN_FOLD_CHARS, Math.ceil(read * MAX_FOLD_SHARE)));
}

/** The pure summarization step: same request, same output (its `signal` is not read). */
export function summarizeExtractive(input: SummarizeRequest): string {
  const maxChars = input.purpose === 'fold' ? foldChars(input.lines, input.maxOutputTokens * 4) : input.maxOutputTokens * 4;
  // Summaries to merge are read as plain lines: their headings and `- [date] speaker:` items keep their section.
  const units: Unit[] = input.purpose === 'fold' ? unitsFromTranscript(input.lines) : unitsFromPlainText(input.summaries.join('\n\n'));
  const previousSummary = input.purpose === 'fold' ? input.previousSummary : undefined;
  const layout = createLayout();
  selectUnits(units, maxChars, layout, previousSummary);
  let text = layout.render();
  if (text === '') {
    // Nothing fit whole (a tiny budget): keep the start of the most informative unit.
    const best = [...units].sort((a, b) => b.words.size - a.words.size || a.order - b.order)[0];
    text = best ? best.text : '';
  }
  text = fit(text, maxChars);
  return text === '' ? fit(NOTHING_TO_SUMMARIZE, maxChars) || '-' : text;
}

/** Characters of one line as the summarizer reads it: its head (time, speaker), text and tool calls. */
function lineChars(line: SummaryLine): number {
  const calls = (line.toolCalls ?? []).reduce((sum, call) => sum + call.name.length + call.id.length + call.arguments.length + 10, 0);
  return line.time.length + line.role.length + (line.name?.length ?? 0) + line.text.length + 5 + calls;
}

/** Characters of what the summarizer read, for the usage estimate. */
export function inputChars(request: SummarizeRequest): number {
  if (request.purpose === 'resummarize') return request.summaries.reduce((sum, text) => sum + text.length + 2, 0);
  return request.lines.reduce((sum, line) => sum + lineChars(line), 0) + (request.previousSummary?.length ?? 0);
}
