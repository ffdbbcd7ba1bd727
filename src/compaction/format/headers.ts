/**
 * Batch headers: every archived batch's text starts with `[depth:N|start:ISO|end:ISO|count:M]`.
 * Only the first line of a text is ever parsed as a header, and `neutralizeFraming` indents any
 * line of summary text that looks like framing, so archived content cannot forge a header.
 */
export interface BatchHeader {
  depth: number;
  start: string;
  end: string;
  count: number;
}

/**
 * Every character some reader treats as a line break: CR LF, LF, CR, VT, FF, FS/GS/RS, NEL, LS, PS
 * (JavaScript's `m` regexes break at CR, LS and PS; Python's `splitlines` and Unicode at all of them).
 * Framing is only safe if content cannot start a line for any of these readers.
 */
export const LINE_BREAK = /\r\n|[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/;
const LINE_BREAKS = new RegExp(LINE_BREAK.source, 'g');

/** Every kind of line break turned into `\n`. */
export function normalizeLineBreaks(text: string): string {
  return text.replace(LINE_BREAKS, '\n');
}

/**
 * Archived text under column-0 framing: line breaks of every kind become `\n` and every non-empty line
 * is indented, so no line of the text can pass for framing in any reader.
 */
export function indentArchivedText(text: string, indent = '  '): string {
  return normalizeLineBreaks(text)
    .split('\n')
    .map((line) => (line === '' ? line : indent + line))
    .join('\n');
}

/** Header fields hold no whitespace, `|` or `]`, so a header is always one line that parses back. */
const FIELD = '[^|\\]\\s\\p{C}]+';
const HEADER = new RegExp(`^\\[depth:(\\d+)\\|start:(${FIELD})\\|end:(${FIELD})\\|count:(\\d+)\\]$`, 'u');

/** A value made safe to sit inside one line of framing (times are ISO already; this only guards odd input). */
export function framingField(value: string): string {
  return value.replace(/[|\]\s\p{C}]/gu, '_') || '_';
}

export function formatHeader(header: BatchHeader): string {
  return `[depth:${header.depth}|start:${framingField(header.start)}|end:${framingField(header.end)}|count:${header.count}]`;
}

/** The header on the first line of `text`, or undefined when the first line is not one. */
export function parseHeader(text: string): BatchHeader | undefined {
  const firstLine = text.split('\n', 1)[0] ?? '';
  const match = HEADER.exec(firstLine);
  if (!match) return undefined;
  return { depth: Number(match[1]), start: match[2]!, end: match[3]!, count: Number(match[4]) };
}

/**
 * What may precede framing-looking text without a reader seeing it: whitespace, zero-width and other
 * format characters, combining marks, and blank-looking letters (Hangul fillers, braille blank).
 */
const INVISIBLE_PREFIX = /^[\s\p{Z}\p{Cf}\p{Cc}\p{M}\u115f\u1160\u3164\uffa0\u2800]*/u;
/** Framing once lookalikes are folded (NFKC maps fullwidth `［` to `[`): headers, markers, gap line, batch separators. */
const FRAMING_START = /^(\[\s*(depth\s*:|context summary|end of context summary|\.\.\.?\s*\d+ batch)|-{2,}\s*batch)/i;

/** True when a reader could take `line` for a header, a clip-archive marker or a batch separator. */
export function looksLikeFraming(line: string): boolean {
  return FRAMING_START.test(line.normalize('NFKC').replace(INVISIBLE_PREFIX, ''));
}

/**
 * Line breaks of every kind become `\n`, and lines that could be mistaken for framing are indented;
 * everything else is left as written.
 */
export function neutralizeFraming(text: string): string {
  return normalizeLineBreaks(text)
    .split('\n')
    .map((line) => (looksLikeFraming(line) ? `  ${line.replace(/^\s+/, '')}` : line))
    .join('\n');
}

/** The stored text of a batch: its header line, then its (neutralized) summary. */
export function batchContent(header: BatchHeader, summary: string): string {
  return `${formatHeader(header)}\n${neutralizeFraming(summary.trim())}`;
}

/** The summary text of a batch without its header line. */
export function batchBody(content: string): string {
  if (!parseHeader(content)) return content;
  const newline = content.indexOf('\n');
  return newline < 0 ? '' : content.slice(newline + 1);
}
