/**
 * Turn a request into candidate units: one per sentence (or clause) of a message, one per tool call,
 * one per group of values of a tool result, or one per line item of earlier summaries. Each unit knows
 * its date, speaker, section, the text it would be written as, and its weighted words.
 */
import type { SummaryLine } from '../summarizer.js';
import { SECTIONS, classifySentence, isError, weightedWords, type SectionKey } from './classify.js';
import { resolveRelativeDates } from '../../conversation/relative-dates.js';
import { splitSentences } from './sentences.js';
import { condense } from './condense.js';
import { sliceWhole } from '../../conversation/well-formed-text.js';

export interface Unit {
  /** Position in the input: output keeps this order within a section. */
  order: number;
  /** The day it was said (YYYY-MM-DD): consecutive units of one speaker and day share a line. */
  date?: string;
  speaker?: string;
  section: SectionKey;
  text: string;
  words: Map<string, number>;
  /** Said in a message that answers another speaker's question (see salience.ts). */
  reply?: boolean;
}

/** Longest string value kept from tool arguments or results. */
const MAX_VALUE_CHARS = 80;
/** Values per tool-result unit. */
const PAIRS_PER_UNIT = 8;

function isoDay(createdAt: string): string | undefined {
  const time = Date.parse(createdAt);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString().slice(0, 10);
}

function clip(value: string): string {
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_VALUE_CHARS ? `${sliceWhole(flat, 0, MAX_VALUE_CHARS - 1)}…` : flat;
}

/** `key=value` pairs of the primitive leaves of a JSON value (keys are the nearest named field). */
function leaves(value: unknown, key: string, out: string[]): void {
  if (value === null || value === undefined || value === '') return;
  if (Array.isArray(value)) {
    for (const item of value) leaves(item, key, out);
  } else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) leaves(v, k, out);
  } else {
    const text = clip(String(value));
    out.push(key ? `${key}=${text}` : text);
  }
}

function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

/** Tool-result chunks: one per element of a top-level array of objects, else groups of PAIRS_PER_UNIT values. */
function resultChunks(value: unknown): string[] {
  const items = Array.isArray(value) ? value : [value];
  const chunks: string[] = [];
  for (const item of items) {
    const pairs: string[] = [];
    leaves(item, '', pairs);
    for (let i = 0; i < pairs.length; i += PAIRS_PER_UNIT) chunks.push(pairs.slice(i, i + PAIRS_PER_UNIT).join(', '));
  }
  return chunks;
}

function callText(name: string, args: string): string {
  const parsed = parseJson(args);
  if (parsed === undefined) return `call ${name}(${clip(args)})`;
  const pairs: string[] = [];
  leaves(parsed, '', pairs);
  return `call ${name}(${pairs.join(', ')})`;
}

/** A sentence as written: condensed, with closing punctuation so that units joined on a line read as sentences. */
function sentence(text: string, names: ReadonlySet<string>): string {
  const condensed = condense(text, names).replace(/[\s:;,\u2013\u2014-]+$/, '');
  return condensed === '' || /[.!?…]["')\]]*$/.test(condensed) ? condensed : `${condensed}.`;
}

/** Units from parsed transcript lines; relative dates resolved against each message's date. */
export function unitsFromTranscript(lines: SummaryLine[]): Unit[] {
  const units: Unit[] = [];
  const names = new Set(lines.flatMap((line) => (line.name && line.role !== 'tool' ? [line.name.split(/\s+/)[0]!.toLowerCase()] : [])));
  let reply = false;
  const push = (date: string | undefined, speaker: string, section: SectionKey, text: string): void => {
    if (text === '') return;
    const unit: Unit = { order: units.length, speaker, section, text, words: weightedWords(text) };
    if (date) unit.date = date;
    if (reply) unit.reply = true;
    units.push(unit);
  };
  const lastSpeakerIndex = lines.length - 1;
  lines.forEach((line, index) => {
    const date = isoDay(line.time);
    const base = new Date(line.time);
    const toolName = line.name ?? 'tool';
    const speaker = line.role === 'tool' ? `${toolName} result` : (line.name ?? line.role);
    const before = lines[index - 1];
    // Replies carry the news: a message after another speaker's question (see salience.ts).
    reply = before !== undefined && before.role !== 'tool' && (before.name ?? before.role) !== speaker && before.text.includes('?');
    if (line.role === 'tool') {
      const parsed = parseJson(line.text);
      if (parsed !== undefined) {
        for (const chunk of resultChunks(parsed)) push(date, speaker, isError(chunk) ? 'errors' : 'tools', chunk);
        return;
      }
    }
    // A question is unanswered when nobody spoke after it.
    const unanswered = index === lastSpeakerIndex && line.role !== 'tool';
    // Tool output is kept sentence by sentence, never cut into clauses: an error line must stay whole.
    for (const part of splitSentences(withoutCutNote(resolveRelativeDates(line.text, base)), line.role !== 'tool')) {
      let section = classifySentence(part, line.role === 'user', unanswered);
      if (line.role === 'tool' && section === 'facts') section = 'tools';
      const keepVerbatim = section === 'tools' || section === 'errors';
      push(date, speaker, section, keepVerbatim ? clipLine(part) : sentence(part, names));
    }
    for (const call of line.toolCalls ?? []) push(date, speaker, 'tools', callText(call.name, call.arguments));
  });
  return units;
}

/** The note compaction appends where it cut a long message (the archive keeps it whole): not content. */
const CUT_NOTE = /\n?\[\.\.\. cut[^\]\n]*\]?\s*$/;

function withoutCutNote(text: string): string {
  return text.replace(CUT_NOTE, '');
}

/** Longest verbatim line kept (tool output and error lines can be huge). */
const MAX_LINE_CHARS = 400;

function clipLine(text: string): string {
  return text.length > MAX_LINE_CHARS ? `${sliceWhole(text, 0, MAX_LINE_CHARS - 1)}…` : text;
}

const HEADING = new Map(SECTIONS.map((s) => [s.heading.toLowerCase(), s.key] as const));
/** `- [YYYY-MM-DD] speaker: text`, `- speaker: text` (the day carried from the line above) or `- text`. */
const ITEM = /^\s*[-*•]\s+(?:\[(\d{4}-\d{2}-\d{2})\]\s+)?(?:([^:\s][^:\n]{0,39}?):\s+)?(.*)$/;

/**
 * Units from plain text: earlier summaries being re-summarized, or any request without transcript lines.
 * Section headings and `- [date] speaker: ...` items of summaries written by this summarizer keep their section,
 * date and speaker; batch headers (`[depth:...]`), context-summary and cut notes (`[... cut ...]`) are skipped.
 */
export function unitsFromPlainText(text: string): Unit[] {
  const units: Unit[] = [];
  let section: SectionKey | undefined;
  let day: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (/^\[(?:depth:|Context Summary|End of Context Summary)/.test(line)) {
      section = undefined;
      day = undefined;
      continue;
    }
    if (line === '' || /^\[\.\.\.[^\]]*\]?$/.test(line)) continue;
    const heading = HEADING.get(line.toLowerCase());
    if (heading) {
      section = heading;
      day = undefined;
      continue;
    }
    const item = ITEM.exec(line);
    if (item?.[1]) day = item[1];
    const speaker = item?.[2];
    const body = withoutCutNote(item ? item[3]! : line);
    for (const part of splitSentences(body).flatMap((p) => p.split(/;\s+/))) {
      const key = section ?? classifySentence(part, false, false);
      const written = key === 'tools' || key === 'errors' ? clipLine(part) : sentence(part, new Set());
      if (written === '') continue;
      const unit: Unit = { order: units.length, section: key, text: written, words: weightedWords(written) };
      if (item && day) unit.date = day;
      if (speaker) unit.speaker = speaker;
      units.push(unit);
    }
  }
  return units;
}
