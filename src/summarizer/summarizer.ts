/**
 * The summarizer port: structured data in, text out. The core passes transcript lines (or the summaries to
 * merge), the summary so far and a token budget; each adapter renders what it needs from them (the remote one
 * its prompt, the extractive one its sentence units) and never parses a prompt back.
 */
import type { Role } from '../conversation/types.js';

/** A tool call a message makes, as data. */
export interface SummaryToolCall {
  /** The call's id; a tool result names it in `toolCallId`. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments as the model sent them (usually JSON text), verbatim. */
  arguments: string;
}

/** One message of the transcript to summarize. */
export interface SummaryLine {
  /** When it was said, ISO 8601. Summaries date facts by it and resolve "yesterday" against it. */
  time: string;
  /** Who spoke: `user`, `assistant`, `tool` (a tool result) or `system`. */
  role: Role;
  /** The speaker's name, when the message has one (a participant's name, or the tool of a tool result). Default none. */
  name?: string;
  /** For a tool result: the id of the call it answers. Default none. */
  toolCallId?: string;
  /**
   * The message text as written. Cut only when this one message (or tool group) alone is larger than a
   * request may carry; the cut text ends with a note saying so, and the archive keeps it whole.
   */
  text: string;
  /** Tool calls the message makes, in order. Default none. */
  toolCalls?: SummaryToolCall[];
}

/** Fields every request has. */
interface SummarizeRequestBase {
  /** Upper bound of the answer in tokens; adapters return no more (the remote one refuses over twice as much). An integer >= 1. */
  maxOutputTokens: number;
  /** Aborts the call: queued, in flight or backing off. Default none. */
  signal?: AbortSignal;
  /**
   * What the summary must keep, in the words of whoever asked for the compaction (the `compact` tool's `focus`, at
   * most 400 characters). Adapters give it precedence when choosing what to keep. Default none.
   */
  focus?: string;
}

/** Summarize a stretch of conversation (a depth-0 batch). */
export interface FoldRequest extends SummarizeRequestBase {
  purpose: 'fold';
  /** The messages to summarize, in conversation order; never empty. */
  lines: SummaryLine[];
  /**
   * What the summaries before this one already say (the previous chunk's summary, or the newest archived
   * batch), so this one builds on it instead of repeating it. Default none: nothing came before.
   */
  previousSummary?: string;
  /**
   * The lines open a turn that is still going on: its later messages stay in the model's context verbatim, after
   * the summary. The summary should say what the turn asked and what was done so far, so the work can go on.
   * Default false.
   */
  turnPrefix?: boolean;
}

/** Merge summaries into one of the next depth (re-summarization). */
export interface ResummarizeRequest extends SummarizeRequestBase {
  purpose: 'resummarize';
  /** The summaries to merge, oldest first, each as archived: a `[depth:N|start|end|count]` header line, then its text. */
  summaries: string[];
}

export type SummarizeRequest = FoldRequest | ResummarizeRequest;

export interface SummaryUsage {
  /** Tokens the request took, by the server's count (else an estimate: see `Summarizer.estimatesUsage`). */
  inputTokens: number;
  /** Tokens of the answer, likewise. */
  outputTokens: number;
}

export interface Summary {
  /** The summary; never empty. */
  text: string;
  usage: SummaryUsage;
  /** The model that answered (for results and logs). */
  model: string;
  /** Set when the primary summarizer failed and a fallback answered instead: who failed, and the short reason. */
  fallback?: { from: string; reason: string };
}

/**
 * Anything that turns a summarize request into text.
 * Adapters throw MemfoldError('model_error') with `retryable` set; they never return empty text.
 */
export interface Summarizer {
  /** Identifies the summarizer in results, e.g. `openai:gpt-4o-mini` or `extractive`. */
  readonly id: string;
  /** Tokens the summarizer model accepts; requests stay within `summarizerInputShare` of it. The OpenAI adapter's default is 128,000. */
  readonly contextWindow: number;
  /**
   * True when `usage` is an estimate rather than the model's own count (the offline summarizer), so the
   * summarizer token figures of a compaction result are estimates too. Default false.
   */
  readonly estimatesUsage?: boolean;
  /**
   * The fixed text this adapter sends with every request of `maxOutputTokens` (its instructions), so the core can
   * count it against the window with its own tokenizer. Default: none (an adapter that sends only the lines).
   */
  promptOverhead?(maxOutputTokens: number): string;
  summarize(request: SummarizeRequest): Promise<Summary>;
}
