/**
 * What the model can read, pure: whether an evidence turn's own text is in the prompt or in a memory_read
 * answer, and how many of the answer's words are. A summary that covers a turn earns nothing here; only
 * the words themselves count.
 *
 * An evidence turn is readable when some EVIDENCE_WINDOW_CHARS-character stretch of it, starting at a word,
 * appears verbatim (whitespace-normalized); a turn that short or shorter must appear whole. So an excerpt of a
 * long message counts. The earlier probe (the turn's first 120 characters) stays as a secondary figure.
 */
import { normalizedTokens } from './answer-tokens.js';

/** Length of the verbatim stretch that makes an evidence turn readable; also the first-characters probe's length. */
export const EVIDENCE_WINDOW_CHARS = 120;
/** The earlier probe's length (the turn's first characters). */
export const EVIDENCE_PREFIX_CHARS = EVIDENCE_WINDOW_CHARS;

/** Every run of whitespace as one space, trimmed: indentation and line breaks a renderer adds do not count. */
export function normalizeWhitespace(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/** The earlier probe: an evidence turn's first EVIDENCE_PREFIX_CHARS characters, whitespace-normalized. */
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

// A polynomial rolling hash modulo 2^32 over UTF-16 code units (integer arithmetic only): a window's hash in
// constant time from the previous one's. Equal hashes are checked against the text, so collisions cost nothing.
const BASE = 0x01000193;
const N = EVIDENCE_WINDOW_CHARS;
const TOP = (() => {
  let p = 1;
  for (let i = 1; i < N; i++) p = Math.imul(p, BASE);
  return p;
})();

function firstHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < N; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/** The hash of the window starting at `start + 1`, from the one starting at `start`. */
function nextHash(text: string, hash: number, start: number): number {
  return (Math.imul((hash - Math.imul(text.charCodeAt(start), TOP)) | 0, BASE) + text.charCodeAt(start + N)) | 0;
}

/**
 * The earliest start of each window hash in a text: an open-addressing table in typed arrays (hashes, and
 * starts + 1 with 0 for an empty slot), far cheaper to fill than a Map for the thousands of windows of a view.
 */
interface WindowTable {
  hashes: Int32Array;
  starts: Int32Array;
  mask: number;
}

function buildTable(text: string): WindowTable {
  const windows = Math.max(0, text.length - N + 1);
  let size = 16;
  while (size < windows * 2) size *= 2;
  const table = { hashes: new Int32Array(size), starts: new Int32Array(size), mask: size - 1 };
  if (windows === 0) return table;
  let hash = firstHash(text);
  for (let start = 0; ; start++) {
    if (start > 0) hash = nextHash(text, hash, start - 1);
    let slot = hash & table.mask;
    while (table.starts[slot] !== 0 && table.hashes[slot] !== hash) slot = (slot + 1) & table.mask;
    if (table.starts[slot] === 0) {
      table.hashes[slot] = hash;
      table.starts[slot] = start + 1;
    }
    if (start + 1 >= windows) break;
  }
  return table;
}

/** The earliest start of a window with this hash, or -1. */
function lookup(table: WindowTable, hash: number): number {
  let slot = hash & table.mask;
  while (table.starts[slot] !== 0) {
    if (table.hashes[slot] === hash) return table.starts[slot]! - 1;
    slot = (slot + 1) & table.mask;
  }
  return -1;
}

/** Each view's table, built once, on first use. */
const windowTables = new WeakMap<ReadableView, WindowTable>();

function windowTable(view: ReadableView): WindowTable {
  let table = windowTables.get(view);
  if (!table) {
    table = buildTable(view.text);
    windowTables.set(view, table);
  }
  return table;
}

/**
 * Where in `view.text` an evidence turn is first readable: the earliest start of one of its word-start
 * windows (or of the whole turn, when it is short), -1 when none appears. Linear in the turn's length
 * once the view's index is built (linear in the view's length, once per view).
 */
export function readablePosition(view: ReadableView, content: string): number {
  const turn = normalizeWhitespace(content);
  if (turn === '' || view.text === '') return -1;
  if (turn.length <= N) return view.text.indexOf(turn);
  if (view.text.length < N) return -1;
  const table = windowTable(view);
  let best = -1;
  let hash = firstHash(turn);
  for (let start = 0; ; start++) {
    if (start > 0) hash = nextHash(turn, hash, start - 1);
    const at = lookup(table, hash);
    if (at >= 0 && (best < 0 || at < best) && (start === 0 || turn.charCodeAt(start - 1) === 32)) {
      const window = turn.slice(start, start + N);
      // The table keeps a hash's earliest start; another window with the same hash may stand there.
      const found = view.text.startsWith(window, at) ? at : view.text.indexOf(window);
      if (found >= 0 && (best < 0 || found < best)) best = found;
    }
    if (start + N >= turn.length) break;
  }
  return best;
}

/** Whether an evidence turn is readable in the view (see `readablePosition`). */
export function isReadable(view: ReadableView, content: string): boolean {
  return readablePosition(view, content) >= 0;
}

export interface ReadableScore {
  /** Share of the evidence turns readable in the prompt or the tool's answer. */
  evidence: number;
  /** Every evidence turn readable. */
  evidenceAll: boolean;
  /** Share readable in the prompt alone, and in the tool's answer alone. */
  evidenceInPrompt: number;
  evidenceInTool: number;
  /** The earlier probe: share of the evidence turns whose first 120 characters appear in the prompt or the tool's answer. */
  evidencePrefix: number;
  /** Share of the answer's normalized tokens present in prompt or tool answer; null without an answer (or one with no tokens). */
  answer: number | null;
}

/** Scores one question. `evidenceTexts` are the evidence turns' contents; a turn without text is never readable. */
export function scoreReadable(
  evidenceTexts: readonly string[],
  answer: string | undefined,
  prompt: ReadableView,
  tool: ReadableView = EMPTY_VIEW,
): ReadableScore {
  const inPrompt = evidenceTexts.map((t) => isReadable(prompt, t));
  const inTool = evidenceTexts.map((t) => isReadable(tool, t));
  const either = evidenceTexts.map((_, i) => inPrompt[i]! || inTool[i]!);
  const snippets = evidenceTexts.map(evidenceSnippet);
  const prefix = snippets.map((s) => s !== '' && (prompt.text.includes(s) || tool.text.includes(s)));
  const share = (flags: boolean[]) => (flags.length === 0 ? 0 : flags.filter(Boolean).length / flags.length);
  const wanted = new Set(answer === undefined ? [] : normalizedTokens(answer));
  let present = 0;
  for (const token of wanted) if (prompt.tokens.has(token) || tool.tokens.has(token)) present++;
  return {
    evidence: share(either),
    evidenceAll: either.length > 0 && either.every(Boolean),
    evidenceInPrompt: share(inPrompt),
    evidenceInTool: share(inTool),
    evidencePrefix: share(prefix),
    answer: wanted.size === 0 ? null : present / wanted.size,
  };
}

/** Tokens of a tool answer as the eval counts everything: chars/4, rounded up. */
export function toolTokens(output: string): number {
  return Math.ceil(output.length / 4);
}
