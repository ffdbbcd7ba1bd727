/**
 * Step 4, the only step that calls the model: chunk-and-fold. Chunk k is summarized with the
 * summary of the chunks before it as context, so each summary can build on, instead of repeat,
 * what is already archived. The summarizer gets structured lines and renders its own request.
 * Outputs longer than maxSummaryTokens are cut.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import type { Summarizer, SummarizeRequest, Summary, SummaryLine } from '../../summarizer/summarizer.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { clipText } from './chunk.js';
import { renderMessage } from '../format/transcript-format.js';

export interface FoldStep {
  text: string;
  summary: Summary;
}

export interface FoldOptions {
  summarizer: Summarizer;
  tokens: TokenCounter;
  maxSummaryTokens: number;
  signal?: AbortSignal;
  onStep?: (done: number, total: number) => void;
}

/** One chunk to fold: its lines. */
export interface FoldChunk {
  lines: SummaryLine[];
}

/** Chunks to fold in order: an array, or chunks made when their turn comes (`at` is called once per chunk, in order). */
export type FoldChunks = Pick<readonly FoldChunk[], 'length' | 'at'>;

/** A message as a summarizer line. */
export function summaryLine(message: Pick<ConversationMessage, 'role' | 'content' | 'createdAt' | 'name' | 'toolCallId' | 'toolCalls'>): SummaryLine {
  const line: SummaryLine = { time: message.createdAt, role: message.role, text: message.content };
  if (message.name) line.name = message.name;
  if (message.role === 'tool' && message.toolCallId) line.toolCallId = message.toolCallId;
  if (message.toolCalls && message.toolCalls.length > 0) {
    line.toolCalls = message.toolCalls.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
  }
  return line;
}

type FoldMessage = Parameters<typeof summaryLine>[0];

/**
 * A message as a summarizer request carries it: its transcript line, without the time when the message before
 * it in the request has the same one (a session's turns share one; the adapters write it once, and an ISO time
 * costs about as many tokens as a short message's words). Chunks are measured this way.
 */
export function renderFoldLine(message: FoldMessage, previous: Pick<FoldMessage, 'createdAt'> | undefined): string {
  const line = renderMessage(message);
  return previous?.createdAt === message.createdAt ? line.slice(line.indexOf('] ') + 2) : line;
}

/** A chunk's lines as `renderFoldLine` measures them, one per line. */
export function renderFoldTranscript(chunk: readonly FoldMessage[]): string {
  return chunk.map((message, i) => renderFoldLine(message, chunk[i - 1])).join('\n');
}

/**
 * A chunk as the summarizer's lines within `budget` tokens, measured as transcript lines (date and speaker
 * included, as the chunks were sized). Whole unless one unit alone is larger than a chunk: then whole lines
 * while they fit, and the first that does not is cut with a note; the archive keeps every message verbatim.
 */
export function foldChunkOf(chunk: readonly FoldMessage[], budget: number, count: (text: string) => number): FoldChunk {
  const transcript = renderFoldTranscript(chunk);
  if (count(transcript) <= budget) return { lines: chunk.map(summaryLine) };
  const lines: SummaryLine[] = [];
  let used = 0;
  for (const [i, message] of chunk.entries()) {
    const cost = count(renderFoldLine(message, chunk[i - 1])) + 1;
    if (used + cost <= budget) {
      lines.push(summaryLine(message));
      used += cost;
      continue;
    }
    // The line's head (date, speaker) still has to fit; its tool calls are left out with the rest.
    const { toolCalls: _calls, ...line } = summaryLine(message);
    const room = Math.max(16, budget - used - count(renderMessage({ ...message, content: '', toolCalls: [] })) - 1);
    lines.push({ ...line, text: clipText(message.content, room, count) });
    break;
  }
  return { lines };
}

/** The fixed text the summarizer sends with each request (its instructions), as the adapter reports it. */
export function promptOverhead(summarizer: Summarizer, maxSummaryTokens: number): string {
  return summarizer.promptOverhead?.(maxSummaryTokens) ?? '';
}

/**
 * One request, its text cut to maxSummaryTokens. Its usage is not fed to the token counter: the summarizer's
 * prompt is another model's count of another text than the assistant's context (see src/tokens/README.md).
 */
async function summarizeOnce(request: SummarizeRequest, options: FoldOptions): Promise<FoldStep> {
  const summary = await options.summarizer.summarize(request);
  const text = clipText(summary.text.trim(), options.maxSummaryTokens, (t) => options.tokens.count(t));
  return { text, summary };
}

/**
 * Fold `chunks` in order, each with the summary before it; `turnPrefix` marks them the opening of a turn still going
 * on. `onSummary` hears each step as it is made.
 */
export async function foldChunks(
  chunks: FoldChunks,
  previousSummary: string | undefined,
  options: FoldOptions,
  turnPrefix = false,
  onSummary: (index: number, step: FoldStep) => void = () => undefined,
): Promise<FoldStep[]> {
  const steps: FoldStep[] = [];
  let summarySoFar = previousSummary;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks.at(i)!;
    const request: SummarizeRequest = {
      purpose: 'fold',
      lines: chunk.lines,
      maxOutputTokens: options.maxSummaryTokens,
      ...(summarySoFar ? { previousSummary: summarySoFar } : {}),
      ...(turnPrefix ? { turnPrefix: true } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    const step = await summarizeOnce(request, options);
    steps.push(step);
    onSummary(steps.length - 1, step);
    summarySoFar = step.text;
    options.onStep?.(steps.length, chunks.length);
  }
  return steps;
}

/** Merge summaries (oldest first, as archived) into one of the next depth. */
export async function foldSummaries(summaries: readonly string[], options: FoldOptions): Promise<FoldStep> {
  const request: SummarizeRequest = {
    purpose: 'resummarize',
    summaries: [...summaries],
    maxOutputTokens: options.maxSummaryTokens,
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const step = await summarizeOnce(request, options);
  options.onStep?.(1, 1);
  return step;
}
