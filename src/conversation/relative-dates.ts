/**
 * Resolve relative dates against the time a message was written, so that a summary read months later
 * still says when: "yesterday" -> "yesterday (7 May 2023)", "last week" -> "last week (week of 1 May 2023)",
 * "last month" -> "last month (April 2023)", "last year" -> "last year (2022)". Calendar arithmetic in UTC; weeks
 * start on Monday. Dates are written in words, not ISO: they sit inside sentences (the line prefix keeps ISO).
 * Vague phrases ("a few days ago", "on Friday" without last/next) are left alone.
 *
 * Two styles of reading: `calendar` (the summarizer's, above) names the calendar week or weekend; `anchored`
 * (memory_read's notes) says a past week, weekend or weekday from the day it was said, as a reader would
 * ("last week" on 16 June 2023 -> "the week before 16 June 2023"; "last Friday" -> "Friday 14 July 2023, the
 * Friday before 15 July 2023"): a week ago is a span ending that day, not a calendar week, and so is "the past
 * month" or "the past year" (while "last month" names the calendar month).
 */

const DAY_MS = 86_400_000;
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const COUNTS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  couple: 2,
  'a couple': 2,
  'a couple of': 2,
};
const COUNT = String.raw`(\d{1,3}|a couple of|a couple|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`;
const UNIT = String.raw`(day|week|month|year)s?`;
const WEEKDAY = String.raw`(monday|tuesday|wednesday|thursday|friday|saturday|sunday)`;

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
/** A day as a person writes it, `7 May 2023`: read in a sentence, it needs no decoding. */
const day = (d: Date): string => `${d.getUTCDate()} ${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
const addDays = (d: Date, n: number): Date => new Date(d.getTime() + n * DAY_MS);
const monday = (d: Date): Date => addDays(d, -((d.getUTCDay() + 6) % 7));
const month = (d: Date, delta: number): string => {
  const m = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + delta, 1));
  return `${MONTH_NAMES[m.getUTCMonth()]} ${m.getUTCFullYear()}`;
};
const year = (d: Date, delta: number): string => String(d.getUTCFullYear() + delta);

function count(word: string): number | undefined {
  const w = word.toLowerCase();
  return /^\d+$/.test(w) ? Number(w) : COUNTS[w];
}

/** The absolute form of `n` units away from `base` (negative: past). */
function shift(base: Date, n: number, unit: string): string {
  switch (unit) {
    case 'day':
      return day(addDays(base, n));
    case 'week':
      return `week of ${day(monday(addDays(base, 7 * n)))}`;
    case 'month':
      return month(base, n);
    default:
      return year(base, n);
  }
}

/** The Saturday of the weekend `offset` weekends from the one `base` is in or next to (0 = this weekend). */
function weekend(base: Date, offset: number): string {
  const dow = base.getUTCDay();
  const thisSaturday = dow === 0 ? addDays(base, -1) : addDays(base, 6 - dow);
  return `weekend of ${day(addDays(thisSaturday, 7 * offset))}`;
}

/** How a reading is written (see the module comment). */
export type RelativeDateStyle = 'calendar' | 'anchored';

const capitalized = (word: string): string => `${word[0]!.toUpperCase()}${word.slice(1).toLowerCase()}`;

interface Rule {
  pattern: RegExp;
  resolve(match: RegExpExecArray, base: Date, style: RelativeDateStyle): string | undefined;
}

/** What makes "for 3 years" a duration up to now: a perfect tense within 40 characters before it. */
const HAVE_BEFORE = /(?:'ve|\bhave|\bhas|\bbeen)\b[^.!?]{0,40}$/i;

const RULES: Rule[] = [
  {
    // A duration up to now ("I've had them for 3 years now") says when it began.
    // The "have" is looked for behind a match, not at every place of the text (a lookbehind there cost most of the time).
    pattern: new RegExp(String.raw`\bfor ${COUNT} (month|year)s?(?: now)?\b`, 'gi'),
    resolve: (m, b) => {
      if (!HAVE_BEFORE.test(m.input.slice(Math.max(0, m.index - 60), m.index))) return undefined;
      const n = count(m[1]!);
      return n === undefined ? undefined : `since ${shift(b, -n, m[2]!.toLowerCase())}`;
    },
  },
  { pattern: /\bthe day before yesterday\b/gi, resolve: (_m, b) => day(addDays(b, -2)) },
  { pattern: /\bthe day after tomorrow\b/gi, resolve: (_m, b) => day(addDays(b, 2)) },
  { pattern: /\b(?:yesterday|last night)\b/gi, resolve: (_m, b) => day(addDays(b, -1)) },
  // Anchored readings leave the day itself out: the line it is said in already gives it.
  { pattern: /\b(?:today|tonight|this (?:morning|afternoon|evening))\b/gi, resolve: (_m, b, style) => (style === 'anchored' ? undefined : day(b)) },
  { pattern: /\btomorrow\b/gi, resolve: (_m, b) => day(addDays(b, 1)) },
  {
    pattern: new RegExp(String.raw`\b${COUNT} ${UNIT} ago\b`, 'gi'),
    resolve: (m, b) => {
      const n = count(m[1]!);
      return n === undefined ? undefined : shift(b, -n, m[2]!.toLowerCase());
    },
  },
  {
    pattern: new RegExp(String.raw`\bin ${COUNT} ${UNIT}\b`, 'gi'),
    resolve: (m, b) => {
      const n = count(m[1]!);
      return n === undefined ? undefined : shift(b, n, m[2]!.toLowerCase());
    },
  },
  {
    pattern: new RegExp(String.raw`\b(last|this past|past|this|next) ${WEEKDAY}\b`, 'gi'),
    resolve: (m, b, style) => {
      const which = m[1]!.toLowerCase();
      const target = WEEKDAYS.indexOf(m[2]!.toLowerCase());
      const dow = b.getUTCDay();
      if (which === 'next') return day(addDays(b, (target - dow + 7) % 7 || 7));
      if (which === 'this') return day(addDays(monday(b), (target + 6) % 7));
      const past = day(addDays(b, -((dow - target + 7) % 7 || 7)));
      const weekday = capitalized(m[2]!);
      return style === 'anchored' ? `${weekday} ${past}, the ${weekday} before ${day(b)}` : past;
    },
  },
  {
    pattern: /\b(last|this past|past|this|next) (week|weekend|month|year)\b/gi,
    resolve: (m, b, style) => {
      const which = m[1]!.toLowerCase();
      const delta = which === 'this' ? 0 : which === 'next' ? 1 : -1;
      const unit = m[2]!.toLowerCase();
      // A past week or weekend, and "the past month/year" (a span up to the day, unlike "last month"), end that day.
      const span = unit === 'week' || unit === 'weekend' || which !== 'last';
      if (style === 'anchored' && delta < 0 && span) return `the ${unit} before ${day(b)}`;
      if (unit === 'weekend') return weekend(b, delta);
      return shift(b, delta, unit);
    },
  },
];

/** A word every rule's phrase holds: one cheap test spares most texts the rules (memory_read notes hundreds per call). */
const MAY_HOLD = /\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this|past|days?|weeks?|months?|years?)\b/i;

/** A relative phrase of a text (`start`..`end`) and its absolute reading. */
export interface RelativeDate {
  start: number;
  end: number;
  label: string;
}

/**
 * The relative phrases of `text` said at `base`, in order, each with its reading; overlapping matches keep the
 * longest, and a phrase already followed by a parenthesized date, or a figure of speech, is left out.
 */
export function relativeDates(text: string, base: Date, style: RelativeDateStyle = 'calendar'): RelativeDate[] {
  if (!MAY_HOLD.test(text) || Number.isNaN(base.getTime())) return [];
  const found: RelativeDate[] = [];
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(text); m; m = rule.pattern.exec(text)) {
      const label = rule.resolve(m, base, style);
      if (label !== undefined) found.push({ start: m.index, end: m.index + m[0].length, label });
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: RelativeDate[] = [];
  let at = 0;
  for (const hit of found) {
    if (hit.start < at) continue;
    // "feels like yesterday" is a figure of speech, not a date.
    if (/^yesterday$/i.test(text.slice(hit.start, hit.end)) && /\blike\s+(?:just\s+|only\s+)?$/i.test(text.slice(Math.max(0, hit.start - 12), hit.start)))
      continue;
    if (/^\s*\(\s*(?:\d{4}|\d{1,2} [A-Z][a-z]+ \d{4}|[A-Z][a-z]+ \d{4}|week of|weekend of)/.test(text.slice(hit.end, hit.end + 24))) continue;
    kept.push(hit);
    at = hit.end;
  }
  return kept;
}

/**
 * Insert the absolute date after each relative phrase: `I went yesterday` -> `I went yesterday (7 May 2023)`.
 * A phrase already followed by a parenthesized date is left alone; overlapping matches keep the longest.
 */
export function resolveRelativeDates(text: string, base: Date): string {
  let out = '';
  let at = 0;
  for (const hit of relativeDates(text, base)) {
    out += `${text.slice(at, hit.end)} (${hit.label})`;
    at = hit.end;
  }
  return out + text.slice(at);
}
