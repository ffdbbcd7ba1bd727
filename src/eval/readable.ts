/**
 * What the model can read, pure: whether an evidence turn's own text is in the prompt or in a memory_read
 * answer, and how many of the answer's words are. A summary that covers a turn earns nothing here; only
 * the words themselves count.
 */
import { normalizedTokens } from './answer-tokens.js';

/** An evidence turn counts as readable when its first this-many characters (whitespace-normalized) appear verbatim. */
export const EVIDENCE_PREFIX_CHARS = 120;

/** Every run of whitespace as one space, trimmed: indentation and line breaks a renderer adds do not count. */
export function normalizeWhitespace(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/** The part of an evidence turn's text that must appear: its first EVIDENCE_PREFIX_CHARS characters, whitespace-normalized. */
export function evidenceSnippet(content: string): string {
  return normalizeWhitespace(content).slice(0, EVIDENCE_PREFIX_CHARS).trim();
}

/** A text prepared once for many lookups: whitespace-normalized, and its normalized answer tokens. */
export interface ReadableView {
  text: string;
  tokens: ReadonlySet<string>;
}

export function readableView(text: string): ReadableView {
  return { text: normalizeWhitespace(text), tokens: new Set(normalizedTokens(text)) };
}

export const EMPTY_VIEW: ReadableView = Object.freeze({ text: '', tokens: new Set<string>() });

export interface ReadableScore {
  /** Share of the evidence turns readable in the prompt or the tool's answer. */
  evidence: number;
  /** Every evidence turn readable. */
  evidenceAll: boolean;
  /** Share readable in the prompt alone, and in the tool's answer alone. */
  evidenceInPrompt: number;
  evidenceInTool: number;
  /** Share of the answer's normalized tokens present in prompt or tool answer; null without an answer (or one with no tokens). */
  answer: number | null;
}

/** Scores one question. `evidenceTexts` are the evidence turns' contents; an empty snippet (a turn without text) is never readable. */
export function scoreReadable(
  evidenceTexts: readonly string[],
  answer: string | undefined,
  prompt: ReadableView,
  tool: ReadableView = EMPTY_VIEW,
): ReadableScore {
  const snippets = evidenceTexts.map(evidenceSnippet);
  const isIn = (view: ReadableView) => snippets.map((s) => s !== '' && view.text.includes(s));
  const inPrompt = isIn(prompt);
  const inTool = isIn(tool);
  const either = snippets.map((_, i) => inPrompt[i]! || inTool[i]!);
  const share = (flags: boolean[]) => (flags.length === 0 ? 0 : flags.filter(Boolean).length / flags.length);
  const wanted = new Set(answer === undefined ? [] : normalizedTokens(answer));
  let present = 0;
  for (const token of wanted) if (prompt.tokens.has(token) || tool.tokens.has(token)) present++;
  return {
    evidence: share(either),
    evidenceAll: either.length > 0 && either.every(Boolean),
    evidenceInPrompt: share(inPrompt),
    evidenceInTool: share(inTool),
    answer: wanted.size === 0 ? null : present / wanted.size,
  };
}

/** Tokens of a tool answer as the eval counts everything: chars/4, rounded up. */
export function toolTokens(output: string): number {
  return Math.ceil(output.length / 4);
}
