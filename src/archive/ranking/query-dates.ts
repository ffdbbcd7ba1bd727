/**
 * Dates a question names ("on 3 June, 2023", "in May 2023", "camping in June", "in 2022"), as time ranges a
 * search can favour, pure. Soft hints only: a message about an event is often written days after it, so the
 * ranges are widened, and a match adds to a score rather than filtering.
 */

import { loadNow } from '../../load-now.js';

// chrono-node (some 260 modules) is loaded by the first relative question, not with memfold.
let chrono: typeof import('chrono-node') | undefined;

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH = `(${MONTHS.join('|')}|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\\.?`;
const DAY_MS = 86_400_000;
/** A day named in a question: its messages may come up to a week later ("last weekend before April 10"). */
const DAY_BEFORE_MS = 7 * DAY_MS;
const DAY_AFTER_MS = 2 * DAY_MS;
/** A month named in a question: talk about it continues into the next weeks. */
const MONTH_AFTER_MS = 14 * DAY_MS;

export interface TimeHint {
  /** Inclusive range in ms since the epoch; for a month without a year, `month` is set and the range is unused. */
  fromMs: number;
  toMs: number;
  /** 0-11 when the question names a month without a year: any year's. */
  month?: number;
}

function monthIndex(name: string): number {
  const key = name.toLowerCase().replace(/\.$/, '');
  return MONTHS.findIndex((m) => m.startsWith(key.slice(0, 3)));
}

/** Time ranges named in `text`, most specific first; none when it names no date. */
export function timeHints(text: string): TimeHint[] {
  const hints: TimeHint[] = [];
  const taken: Array<[number, number]> = [];
  const free = (start: number, end: number) => !taken.some(([a, b]) => start < b && end > a);
  const take = (match: RegExpExecArray) => taken.push([match.index, match.index + match[0].length]);
  const patterns: Array<[RegExp, (m: RegExpExecArray) => TimeHint | undefined]> = [
    [new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+${MONTH},?\\s+(\\d{4})\\b`, 'gi'), (m) => day(Number(m[3]), monthIndex(m[2]!), Number(m[1]))],
    [new RegExp(`\\b${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'gi'), (m) => day(Number(m[3]), monthIndex(m[1]!), Number(m[2]))],
    [new RegExp(`\\b${MONTH},?\\s+(\\d{4})\\b`, 'gi'), (m) => month(Number(m[2]), monthIndex(m[1]!))],
    // A bare month only as a capitalized word ("in June", not the verb "may").
    [
      new RegExp(`\\b(?:in|during|since|by|of|early|late|mid)\\s+(${MONTHS.map((x) => x[0]!.toUpperCase() + x.slice(1)).join('|')})\\b`, 'g'),
      (m) => ({ fromMs: 0, toMs: 0, month: monthIndex(m[1]!) }),
    ],
    [/\b(?:in|during|since|of)\s+((?:19|20)\d{2})\b/g, (m) => year(Number(m[1]))],
  ];
  for (const [pattern, read] of patterns) {
    for (const match of text.matchAll(pattern)) {
      const m = match as RegExpExecArray;
      if (!free(m.index, m.index + m[0].length)) continue;
      const hint = read(m);
      if (hint) {
        hints.push(hint);
        take(m);
      }
    }
  }
  return hints;
}

function day(y: number, m: number, d: number): TimeHint | undefined {
  if (m < 0 || d < 1 || d > 31) return undefined;
  const at = Date.UTC(y, m, d);
  return { fromMs: at - DAY_BEFORE_MS, toMs: at + DAY_MS + DAY_AFTER_MS };
}

function month(y: number, m: number): TimeHint | undefined {
  if (m < 0) return undefined;
  return { fromMs: Date.UTC(y, m, 1), toMs: Date.UTC(y, m + 1, 1) + MONTH_AFTER_MS };
}

function year(y: number): TimeHint {
  return { fromMs: Date.UTC(y, 0, 1), toMs: Date.UTC(y + 1, 0, 1) };
}

/** Whether an ISO time falls in any of the hints. */
export function withinHints(iso: string, hints: readonly TimeHint[]): boolean {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return false;
  return hints.some((h) =>
    h.month !== undefined ? new Date(ms).getUTCMonth() === h.month || new Date(ms - MONTH_AFTER_MS).getUTCMonth() === h.month : ms >= h.fromMs && ms < h.toMs,
  );
}

/**
 * Times a question names relative to when it is asked ("yesterday", "last Saturday", "two weeks ago", "last
 * year"), resolved by chrono-node against `at` (the conversation's current time, never the machine's clock, so
 * the same question at the same time always resolves the same way). Dates with their own year are left to
 * `timeHints`. Widened like a named day, month or year.
 */
export function relativeTimeHints(text: string, at: string): TimeHint[] {
  const reference = new Date(at);
  if (Number.isNaN(reference.getTime())) return [];
  const hints: TimeHint[] = [];
  chrono ??= loadNow<typeof import('chrono-node')>('chrono-node');
  for (const result of chrono.parse(text, { instant: reference, timezone: 'UTC' }, { forwardDate: false })) {
    // A date written with its year ("3 June, 2023", "May 2023") is absolute: timeHints reads it.
    if (/\b(?:19|20)\d{2}\b/.test(result.text)) continue;
    const start = result.start;
    // A bare month ("in June") is any year's: timeHints reads it.
    if (!start.isCertain('day') && !start.isCertain('year') && start.isCertain('month')) continue;
    const d = start.date();
    // "Tonight", "this weekend": the time of the question itself or after it, not of what was said before.
    if (d.getTime() >= Date.UTC(reference.getUTCFullYear(), reference.getUTCMonth(), reference.getUTCDate())) continue;
    const y = d.getUTCFullYear();
    const m = d.getUTCMonth();
    const hint =
      start.isCertain('day') || start.isCertain('weekday')
        ? day(y, m, d.getUTCDate())
        : start.isCertain('month')
          ? month(y, m)
          : start.isCertain('year')
            ? year(y)
            : day(y, m, d.getUTCDate());
    if (hint) hints.push(hint);
  }
  return hints;
}
