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

const HEADER = /^\[depth:(\d+)\|start:([^|\]\n]+)\|end:([^|\]\n]+)\|count:(\d+)\]$/;

export function formatHeader(header: BatchHeader): string {
  return `[depth:${header.depth}|start:${header.start}|end:${header.end}|count:${header.count}]`;
}

/** The header on the first line of `text`, or undefined when the first line is not one. */
export function parseHeader(text: string): BatchHeader | undefined {
  const firstLine = text.split('\n', 1)[0] ?? '';
  const match = HEADER.exec(firstLine);
  if (!match) return undefined;
  return { depth: Number(match[1]), start: match[2]!, end: match[3]!, count: Number(match[4]) };
}

/** Lines that start like memfold's own framing (headers, clip-archive markers, batch separators). */
const FRAMING_LINE = /^\s*(\[(depth:|context summary|end of context summary|\.\.\. ?\d+ batch)|--- batch)/i;

/** Indent lines that could be mistaken for framing; everything else is left as written. */
export function neutralizeFraming(text: string): string {
  return text
    .split('\n')
    .map((line) => (FRAMING_LINE.test(line) ? `  ${line.trimStart()}` : line))
    .join('\n');
}

/** The stored text of a batch: its header line, then its (neutralized) summary. */
export function batchContent(header: BatchHeader, summary: string): string {
  return `${formatHeader(header)}\n${neutralizeFraming(summary.trim())}`;
}

/** The summary text of a batch without its header line. */
export function batchBody(content: string): string {
  return parseHeader(content) ? content.slice(content.indexOf('\n') + 1) : content;
}
