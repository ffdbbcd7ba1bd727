/**
 * memory_read's passages, pure: the candidate segments' messages as ranked items (a long message as its sentences),
 * and the lines and headers a passage shows them with.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { indentArchivedText, normalizeLineBreaks } from '../compaction/format/headers.js';
import { renderMessage } from '../compaction/format/transcript-format.js';
import type { SearchHit } from '../archive/archive.js';
import type { WindowItem } from '../archive/ranking/message-windows.js';
import { sentencesOf } from '../archive/ranking/sentences.js';
import type { ReadStrategy } from './memory-read-strategy.js';
import { sliceWhole } from '../conversation/well-formed-text.js';
import { relativeDates } from '../conversation/relative-dates.js';

export interface PoolItem extends WindowItem {
  message: ConversationMessage;
  segment: ArchiveEntry;
  /** 1-based rank of its segment in the archive search. */
  segmentRank: number;
  /** What this item shows: its whole message, or one sentence of a long message. */
  text: string;
  /** Place of this item's sentence in its message, and the message's count of items (1: shown whole). */
  part: number;
  parts: number;
  /** The whole message's line (items shown whole only). */
  line: string;
}

const KIND_WORDS: Record<ArchiveEntry['kind'], string> = { summary: 'summary', transcript: 'transcript', tool_output: 'tool output' };

export function describeEntry(entry: ArchiveEntry): string {
  const what = entry.kind === 'summary' ? `summary depth ${entry.depth}` : KIND_WORDS[entry.kind];
  return `${what} | ${entry.label} | ${entry.start} .. ${entry.end} | ${entry.count} ${entry.kind === 'summary' && entry.depth > 0 ? 'batches' : 'messages'}`;
}

/** An entry's text under its hit line, cut to `maxChars` with a pointer to its label. */
export function entryExcerpt(entry: ArchiveEntry, maxChars: number): string {
  if (entry.content.length <= maxChars) return indentArchivedText(entry.content);
  return `${indentArchivedText(sliceWhole(entry.content, 0, maxChars))}\n[... cut; read label ${entry.label} for the full text]`;
}

/** `2023-05-08 13:56`: the time as a line shows it (the passage header has the day in words). */
function shortTime(iso: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso;
}

/** A speaker's name inside one line of framing: no whitespace, brackets or control characters. */
function speaker(message: ConversationMessage): string {
  return (message.name ?? message.role).replace(/[\s\p{C}[\]:]+/gu, '_') || message.role;
}

/**
 * One message as a passage shows it. Compact: `[time] speaker: text` with the time only when it differs from the
 * previous line's; tool traffic keeps the transcript form. Continuation lines are indented by two spaces, and the
 * whole is indented under the passage header, so no archived text starts a line of framing.
 */
function messageLine(message: ConversationMessage, previous: ConversationMessage | undefined, style: LineStyle): string {
  if (style.lineStyle === 'transcript' || message.role === 'tool' || (message.toolCalls?.length ?? 0) > 0) return indentArchivedText(renderMessage(message));
  const time = previous && previous.createdAt === message.createdAt ? '' : `[${shortTime(message.createdAt)}] `;
  const text = normalizeLineBreaks(message.content).split('\n').join('\n  ');
  return indentArchivedText(`${time}${speaker(message)}: ${text}${dateNote(message, style.dateNotes)}`);
}

/** The line style and the date notes of a passage's lines (`ReadStrategy`). */
export type LineStyle = Pick<ReadStrategy, 'lineStyle' | 'dateNotes'>;

/**
 * The relative dates a message says, read against when it was said, after its text: ` [dates: last week = the week
 * before 16 June 2023]`. After the text, never inside it, so the message stays verbatim.
 */
function dateNote(message: ConversationMessage, style: ReadStrategy['dateNotes']): string {
  if (style === 'none') return '';
  const found = relativeDates(message.content, new Date(message.createdAt), style);
  if (found.length === 0) return '';
  const readings = [...new Set(found.map((hit) => `${message.content.slice(hit.start, hit.end)} = ${hit.label}`))];
  return ` [dates: ${readings.join('; ')}]`;
}

/** An excerpt's cut, at either end of the sentences shown. */
const CUT = '…';

/** The line of a long message's shown sentences (`part`..`last` of its `parts`), its cuts marked. */
function excerptLine(
  message: ConversationMessage,
  text: string,
  cutBefore: boolean,
  cutAfter: boolean,
  previous: ConversationMessage | undefined,
  style: LineStyle,
): string {
  const content = `${cutBefore ? `${CUT} ` : ''}${text.trim()}${cutAfter ? ` ${CUT}` : ''}`;
  return messageLine({ ...message, content }, previous, style);
}

/**
 * The messages of the candidate segments, each once, in conversation order: a message shown whole is one item; a
 * long one (over `longTokens` as a line) is one item per sentence, so it is scored and shown by its matching
 * sentences and never takes the budget whole. Items follow each other by position, across messages too: a short
 * message's neighbour in a long reply is that reply's nearest sentence.
 */
export function pool(hits: readonly SearchHit[], countTokens: (text: string) => number, style: LineStyle, longTokens: number): PoolItem[] {
  const seen = new Set<string>();
  const messages: Array<{ message: ConversationMessage; segment: ArchiveEntry; segmentRank: number }> = [];
  hits.forEach((hit, rank) => {
    for (const message of hit.entry.messages ?? []) {
      if (seen.has(message.id)) continue;
      seen.add(message.id);
      messages.push({ message, segment: hit.entry, segmentRank: rank + 1 });
    }
  });
  messages.sort((a, b) => a.message.seq - b.message.seq);
  const items: PoolItem[] = [];
  let position = 0;
  messages.forEach(({ message, segment, segmentRank }, m) => {
    const before = messages[m - 1]?.message;
    const consecutive = before !== undefined && before.seq === message.seq - 1;
    // A gap between messages that are not neighbours, so no window crosses it.
    position += consecutive ? 1 : 2;
    // A line is costed as it shows after its neighbour; a passage's first line may add its time back (the header's margin covers it).
    const line = messageLine(message, consecutive ? before : undefined, style);
    const tokens = countTokens(`${line}\n`);
    const plain = message.role !== 'tool' && (message.toolCalls?.length ?? 0) === 0;
    const sentences = longTokens > 0 && tokens > longTokens && plain ? sentencesOf(message.content) : [];
    if (sentences.length < 2) {
      items.push({ position, tokens, message, segment, segmentRank, text: message.content, part: 0, parts: 1, line });
      return;
    }
    const groupTokens = countTokens(`${excerptLine(message, '', true, true, undefined, style)}\n`);
    sentences.forEach((text, part) => {
      if (part > 0) position++;
      items.push({ position, tokens: countTokens(text), group: m, groupTokens, message, segment, segmentRank, text, part, parts: sentences.length, line: '' });
    });
  });
  return items;
}

/** Whether a passage shows part of a long message only. */
export function cutIn(shown: readonly PoolItem[]): boolean {
  const count = new Map<string, number>();
  for (const item of shown) if (item.parts > 1) count.set(item.message.id, (count.get(item.message.id) ?? 0) + 1);
  return shown.some((item) => item.parts > 1 && count.get(item.message.id)! < item.parts);
}

/**
 * The lines of one passage: a message shown whole as its line, a long one as its shown sentences. The first line says
 * its time, unless short headers (`shortHeaders`) leave it to the header, which starts with it.
 */
export function passageLines(shown: readonly PoolItem[], style: LineStyle & Pick<ReadStrategy, 'shortHeaders'>): string[] {
  const lines: string[] = [];
  // Short headers: the first line reads as if after a line of its own time.
  let previous: ConversationMessage | undefined = style.shortHeaders ? shown[0]?.message : undefined;
  let first = true;
  for (let i = 0; i < shown.length; ) {
    const item = shown[i]!;
    let j = i + 1;
    while (j < shown.length && shown[j]!.message.id === item.message.id) j++;
    const run = shown.slice(i, j);
    const last = run[run.length - 1]!;
    if (item.parts === 1) lines.push(first ? messageLine(item.message, previous, style) : item.line);
    else lines.push(excerptLine(item.message, run.map((r) => r.text).join(''), item.part > 0, last.part < last.parts - 1, previous, style));
    previous = item.message;
    first = false;
    i = j;
  }
  return lines;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** "Mon 8 May 2023 13:56 .. 14:10 UTC", or with both days when the span crosses midnight; ISO when a time does not parse. */
export function spokenSpan(startIso: string, endIso: string): string {
  const start = new Date(startIso);
  const end = new Date(endIso);
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return `${startIso} .. ${endIso}`;
  const day = (d: Date) => `${DAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  const clock = (d: Date) => d.toISOString().slice(11, 16);
  const sameDay = startIso.slice(0, 10) === endIso.slice(0, 10);
  return `${day(start)} ${clock(start)} .. ${sameDay ? '' : `${day(end)} `}${clock(end)} UTC`;
}

/** A passage's header style (`ReadStrategy`). */
export type HeaderStyle = Pick<ReadStrategy, 'spokenDates' | 'shortHeaders'>;

/**
 * `#k transcript | labels | time span | n messages`; short: one time when the passage's first and last lines share it,
 * and no count (the lines show it).
 */
export function blockHeader(items: readonly PoolItem[], index: number, style: HeaderStyle): string {
  const labels = [...new Set(items.map((item) => item.segment.label))];
  const first = items[0]!.message.createdAt;
  const last = items[items.length - 1]!.message.createdAt;
  const oneTime = style.shortHeaders && first === last;
  const span = style.spokenDates
    ? oneTime
      ? spokenSpan(first, last).replace(/ \.\. \d\d:\d\d UTC$/, ' UTC')
      : spokenSpan(first, last)
    : oneTime
      ? first
      : `${first} .. ${last}`;
  const count = style.shortHeaders ? '' : ` | ${new Set(items.map((item) => item.message.id)).size} messages`;
  return `#${index} transcript | ${labels.join(', ')} | ${span}${count}`;
}
