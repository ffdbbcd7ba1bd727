/**
 * The files footer: every summary batch ends with the files its messages read and modified, computed from their
 * tool calls (`file-touches.ts`) rather than asked of the summarizer, so file knowledge survives any summarizer. A
 * batch of a higher depth carries the union of its children's footers, parsed back from their text. Pure.
 *
 * Form, after a blank line at the end of the batch text (either line left out when it would be empty):
 *
 *     Files read: docs/notes.md, src/app.ts (+3 more)
 *     Files modified: src/fix.ts
 *
 * A path holding `,`, `"` or `(+`, or starting or ending with a space, is written as a JSON string.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import type { FileToolPatterns } from '../compaction-settings.js';
import { clipText } from '../fold/chunk.js';
import { fileTouches, distinctTouches, type FileTouches } from './file-touches.js';
import { batchBody, parseHeader } from '../format/headers.js';
import { sliceWhole } from '../../conversation/well-formed-text.js';

/** What a footer says: the paths it shows and how many more it counts without showing them. */
export interface FilesFooter extends FileTouches {
  moreRead: number;
  moreModified: number;
}

/** Paths shown per list; the rest are counted (`(+N more)`). */
export const MAX_FOOTER_PATHS = 20;
/** A longer path is shown as its head, `…` and its tail (the file name end kept). */
export const MAX_FOOTER_PATH_CHARS = 200;
/** The footer takes at most this share of `maxSummaryTokens`; the summary keeps the rest. */
export const FOOTER_SHARE = 0.25;

const LINE = /^Files (read|modified): (.*)$/;
const MORE = /^(?:(.*) )?\(\+(\d+) more\)$/;

/** The footer of the files `messages` touched: every path, nothing counted yet. */
export function filesFooterOf(messages: readonly Pick<ConversationMessage, 'toolCalls'>[], patterns: FileToolPatterns): FilesFooter {
  const touches = fileTouches(messages, patterns);
  // Two long paths may show alike once bounded: one entry.
  return { ...distinctTouches({ read: touches.read.map(footerPath), modified: touches.modified.map(footerPath) }), moreRead: 0, moreModified: 0 };
}

/** A path as a footer shows it: one line, no control characters, at most MAX_FOOTER_PATH_CHARS. */
export function footerPath(path: string): string {
  const clean = path.replace(/[\p{C}\u2028\u2029]/gu, '?');
  if (clean.length <= MAX_FOOTER_PATH_CHARS) return clean;
  const head = Math.floor(MAX_FOOTER_PATH_CHARS * 0.3);
  return `${sliceWhole(clean, 0, head)}…${sliceWhole(clean, clean.length - (MAX_FOOTER_PATH_CHARS - head - 1))}`;
}

/** The children's footers as one: modified wins over read, first seen first, the counts of the unseen added. */
export function unionFilesFooters(footers: readonly (FilesFooter | undefined)[]): FilesFooter {
  const present = footers.filter((f): f is FilesFooter => f !== undefined);
  const touches = distinctTouches({ read: present.flatMap((f) => f.read), modified: present.flatMap((f) => f.modified) });
  const sum = (key: 'moreRead' | 'moreModified') => present.reduce((n, f) => n + f[key], 0);
  return { ...touches, moreRead: sum('moreRead'), moreModified: sum('moreModified') };
}

function isEmpty(footer: FilesFooter): boolean {
  return footer.read.length + footer.modified.length + footer.moreRead + footer.moreModified === 0;
}

function quoted(path: string): string {
  return /[,"]|\(\+|^\s|\s$|^$/.test(path) ? JSON.stringify(path) : path;
}

function footerLine(kind: 'read' | 'modified', shown: readonly string[], more: number): string {
  if (shown.length === 0 && more === 0) return '';
  const list = shown.map(quoted).join(', ');
  return `Files ${kind}: ${list}${more > 0 ? `${list ? ' ' : ''}(+${more} more)` : ''}`;
}

/**
 * The footer's text within `maxTokens` ('' when there is nothing to say or nothing fits): at most MAX_FOOTER_PATHS
 * paths a list, then paths dropped from the end of the longer list (read on a tie) until it fits; each dropped path
 * is counted.
 */
export function formatFilesFooter(footer: FilesFooter, maxTokens: number, count: (text: string) => number): string {
  const read = footer.read.slice(0, MAX_FOOTER_PATHS);
  const modified = footer.modified.slice(0, MAX_FOOTER_PATHS);
  const render = () =>
    [
      footerLine('read', read, footer.moreRead + footer.read.length - read.length),
      footerLine('modified', modified, footer.moreModified + footer.modified.length - modified.length),
    ]
      .filter(Boolean)
      .join('\n');
  if (isEmpty(footer)) return '';
  let text = render();
  while (count(text) > maxTokens && read.length + modified.length > 0) {
    if (read.length >= modified.length) read.pop();
    else modified.pop();
    text = render();
  }
  return count(text) <= maxTokens ? text : '';
}

/** The paths of one footer line's list (`a.ts, "b, c.ts" (+2 more)`), or undefined when it does not parse. */
function parseList(text: string): { paths: string[]; more: number } | undefined {
  const more = MORE.exec(text);
  let rest = more ? (more[1] ?? '') : text;
  const paths: string[] = [];
  while (rest !== '') {
    const json = /^"(?:[^"\\]|\\.)*"/.exec(rest);
    let path: string;
    if (json) {
      try {
        path = JSON.parse(json[0]) as string;
      } catch {
        return undefined;
      }
      rest = rest.slice(json[0].length);
    } else {
      // Unquoted paths never start with a quote: this is a broken one.
      if (rest.startsWith('"')) return undefined;
      const comma = rest.indexOf(', ');
      path = comma < 0 ? rest : rest.slice(0, comma);
      rest = comma < 0 ? '' : rest.slice(comma);
    }
    paths.push(path);
    if (rest.startsWith(', ')) rest = rest.slice(2);
    else if (rest !== '') return undefined;
  }
  return { paths, more: more ? Number(more[2]) : 0 };
}

/**
 * A text split into what precedes its footer and the footer: the last lines, `Files read:` then `Files modified:`
 * (either may be missing), after a blank line or alone. No footer: the text whole and undefined.
 */
export function splitFilesFooter(text: string): { text: string; footer?: FilesFooter } {
  const lines = text.replace(/\s+$/, '').split('\n');
  const footer: FilesFooter = { read: [], modified: [], moreRead: 0, moreModified: 0 };
  let start = lines.length;
  for (const kind of ['modified', 'read'] as const) {
    const match = LINE.exec(lines[start - 1] ?? '');
    if (!match || match[1] !== kind) continue;
    const list = parseList(match[2]!);
    if (!list) return { text };
    footer[kind] = list.paths;
    footer[kind === 'read' ? 'moreRead' : 'moreModified'] = list.more;
    start--;
  }
  if (start === lines.length || (start > 0 && lines[start - 1]!.trim() !== '')) return { text };
  return {
    text: lines
      .slice(0, Math.max(0, start - 1))
      .join('\n')
      .replace(/\s+$/, ''),
    footer,
  };
}

/** The footer a stored batch ends with (header line and all), if any. */
export function batchFilesFooter(content: string): FilesFooter | undefined {
  return splitFilesFooter(batchBody(content)).footer;
}

/** A stored batch's text without its footer, its header line kept. */
export function withoutFilesFooter(content: string): string {
  if (!parseHeader(content)) return splitFilesFooter(content).text;
  const newline = content.indexOf('\n');
  return newline < 0 ? content : `${content.slice(0, newline + 1)}${splitFilesFooter(content.slice(newline + 1)).text}`;
}

/**
 * A batch's summary ending with `footer`, within `maxSummaryTokens` together: a footer the summarizer wrote itself is
 * replaced, the footer takes at most FOOTER_SHARE of the bound, and the summary is cut to leave it room.
 */
export function withFilesFooter(summary: string, footer: FilesFooter, maxSummaryTokens: number, count: (text: string) => number): string {
  const own = splitFilesFooter(summary).text.trim();
  const text = formatFilesFooter(footer, Math.floor(maxSummaryTokens * FOOTER_SHARE), count);
  if (text === '') return own;
  if (own === '') return text;
  const room = maxSummaryTokens - count(`\n\n${text}`);
  let clipped = clipText(own, room, count);
  // The cut's marker takes tokens of its own: cut again by what it went over.
  if (count(clipped) > room) clipped = clipText(own, Math.max(0, 2 * room - count(clipped)), count);
  return `${clipped}\n\n${text}`;
}
