/**
 * Resolve relative dates against the time a message was written, so that a summary read months later
 * still says when: "yesterday" -> "yesterday (7 May 2023)", "last week" -> "last week (week of 1 May 2023)",
 * "last month" -> "last month (April 2023)", "last year" -> "last year (2022)". Calendar arithmetic in UTC; weeks
 * start on Monday. Dates are written in words, not ISO: they sit inside sentences (the line prefix keeps ISO).
 * Vague phrases ("a few days ago", "on Friday" without last/next) are left alone.
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

interface Rule {
  pattern: RegExp;
  resolve(match: RegExpExecArray, base: Date): string | undefined;
}

const RULES: Rule[] = [
  {
    // A duration up to now ("I've had them for 3 years now") says when it began.
    pattern: new RegExp(String.raw`(?<=(?:'ve|\bhave|\bhas|\bbeen)\b[^.!?]{0,40})\bfor ${COUNT} (month|year)s?(?: now)?\b`, 'gi'),
    resolve: (m, b) => {
      const n = count(m[1]!);
      return n === undefined ? undefined : `since ${shift(b, -n, m[2]!.toLowerCase())}`;
    },
  },
  { pattern: /\bthe day before yesterday\b/gi, resolve: (_m, b) => day(addDays(b, -2)) },
  { pattern: /\bthe day after tomorrow\b/gi, resolve: (_m, b) => day(addDays(b, 2)) },
  { pattern: /\b(?:yesterday|last night)\b/gi, resolve: (_m, b) => day(addDays(b, -1)) },
  { pattern: /\b(?:today|tonight|this (?:morning|afternoon|evening))\b/gi, resolve: (_m, b) => day(b) },
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
    resolve: (m, b) => {
      const which = m[1]!.toLowerCase();
      const target = WEEKDAYS.indexOf(m[2]!.toLowerCase());
      const dow = b.getUTCDay();
      if (which === 'next') return day(addDays(b, (target - dow + 7) % 7 || 7));
      if (which === 'this') return day(addDays(monday(b), (target + 6) % 7));
      return day(addDays(b, -((dow - target + 7) % 7 || 7)));
    },
  },
  {
    pattern: /\b(last|this past|past|this|next) (week|weekend|month|year)\b/gi,
    resolve: (m, b) => {
      const which = m[1]!.toLowerCase();
      const delta = which === 'this' ? 0 : which === 'next' ? 1 : -1;
      const unit = m[2]!.toLowerCase();
      if (unit === 'weekend') return weekend(b, delta);
      return shift(b, delta, unit);
    },
  },
];

/**
 * Insert the absolute date after each relative phrase: `I went yesterday` -> `I went yesterday (2023-05-07)`.
 * A phrase already followed by a parenthesized date is left alone; overlapping matches keep the longest.
 */
export function resolveRelativeDates(text: string, base: Date): string {
  if (Number.isNaN(base.getTime())) return text;
  const found: Array<{ start: number; end: number; label: string }> = [];
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(text); m; m = rule.pattern.exec(text)) {
      const label = rule.resolve(m, base);
      if (label !== undefined) found.push({ start: m.index, end: m.index + m[0].length, label });
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const hit of found) {
    if (hit.start < at) continue;
    // "feels like yesterday" is a figure of speech, not a date.
    if (/^yesterday$/i.test(text.slice(hit.start, hit.end)) && /\blike\s+(?:just\s+|only\s+)?$/i.test(text.slice(Math.max(0, hit.start - 12), hit.start)))
      continue;
    if (/^\s*\(\s*(?:\d{4}|\d{1,2} [A-Z][a-z]+ \d{4}|[A-Z][a-z]+ \d{4}|week of|weekend of)/.test(text.slice(hit.end, hit.end + 24))) continue;
    out += `${text.slice(at, hit.end)} (${hit.label})`;
    at = hit.end;
  }
  return out + text.slice(at);
}
