/**
 * The one date rule for every boundary (append, import, memory_read's from/to, CLI options), pure.
 * Accepts a Date or an ISO 8601 date / date-time on a real calendar day and returns the canonical UTC
 * ISO string. Anything else is refused: Date.parse reads "1 2 3" as a local date and rolls 2023-02-30
 * over to March, silently storing another time.
 */
import type { z } from 'zod';
import { InvalidArgumentError } from '../errors.js';
import { describeValue } from './text.js';
import { valueOnDemand, zod } from '../zod-on-demand.js';

/** ISO 8601 date or date-time; without an offset a date-time is local time, as JavaScript reads it. */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** 0 for a month outside 1-12, so that no day fits. */
function daysInMonth(year: number, month: number): number {
  if (month < 1 || month > 12) return 0;
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Whether `text` is not an ISO 8601 time on a real calendar day with a real clock time. */
function notIsoTime(text: string): boolean {
  const match = ISO_8601.exec(text);
  if (!match) return true;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => (part === undefined ? 0 : Number(part)));
  if (!(day! >= 1 && day! <= daysInMonth(year!, month!))) return true;
  return hour! > 23 || minute! > 59 || second! > 59;
}

/**
 * A zone-less date-time names a local time; inside a daylight-saving gap (02:30 on the night clocks jump from 02:00
 * to 03:00) that time never happened, and Date would silently move it an hour on. The problem, or undefined.
 */
function missingLocalTime(text: string, date: Date): string | undefined {
  const match = ISO_8601.exec(text);
  if (!match || match[4] === undefined || match[7] !== undefined || Number.isNaN(date.getTime())) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => (part === undefined ? 0 : Number(part)));
  const local = [date.getFullYear(), date.getMonth() + 1, date.getDate(), date.getHours(), date.getMinutes(), date.getSeconds()];
  if (local.every((part, i) => part === [year, month, day, hour, minute, second][i])) return undefined;
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return `must be a local time that exists: ${JSON.stringify(text)} has no offset, and in this machine's time zone (${zone}) the clocks skip it (a daylight-saving change); add its UTC offset (${text}Z, or +hh:mm)`;
}

/** A Date or an ISO 8601 string as a canonical ISO string, or the rule it breaks. */
export function isoTimeOrProblem(value: unknown): { time: string } | { problem: string } {
  if (typeof value === 'string' && notIsoTime(value.trim())) {
    return { problem: `must be an ISO 8601 date or time (2023-05-08 or 2023-05-08T13:56:00Z) on a real calendar day, got ${describeValue(value)}` };
  }
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value.trim()) : undefined;
  if (date === undefined) return { problem: `must be a Date or an ISO 8601 string, got ${value === null ? 'null' : typeof value}` };
  const skipped = typeof value === 'string' ? missingLocalTime(value.trim(), date) : undefined;
  if (skipped !== undefined) return { problem: skipped };
  const time = date.getTime();
  // Years 0001-9999: what both toISOString and PostgreSQL read back unchanged.
  if (Number.isNaN(time) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) {
    return { problem: `must be a valid date between years 1 and 9999, got ${JSON.stringify(String(value))}` };
  }
  return { time: date.toISOString() };
}

/** A Date or an ISO 8601 string, as a canonical ISO string; `field` names the input in the error. */
export function parseIsoTime(value: unknown, field: string): string {
  const read = isoTimeOrProblem(value);
  if ('problem' in read) throw new InvalidArgumentError(field, read.problem);
  return read.time;
}

/** `parseIsoTime` as a zod transform: the canonical ISO string, or an issue stating the rule. */
export function toIsoTime(value: unknown, ctx: z.RefinementCtx): string {
  const read = isoTimeOrProblem(value);
  if ('time' in read) return read.time;
  ctx.issues.push({ code: 'custom', message: read.problem, input: value });
  return zod().NEVER;
}

/** A Date or an ISO 8601 string, for the boundaries parsed with a zod schema. */
export const isoTimeSchema = valueOnDemand(() => zod().unknown().transform(toIsoTime));
