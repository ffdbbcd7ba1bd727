/**
 * A duration in milliseconds that becomes a timer, pure: one rule for every setting and option that does. Node's
 * timers take at most 2^31-1 ms (24.8 days); a longer delay is silently replaced by 1 ms, so a timeout set to
 * 2,147,483,648 would fire at once on every call. Such a value is refused, naming the field, instead.
 */
import { InvalidArgumentError } from './errors.js';
import { parseWithSchema } from './conversation/schema-issues.js';
import { zod } from './zod-on-demand.js';

/** The longest delay a Node timer keeps (2^31-1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const rule = (min: number, integer = false) => `must be ${integer ? 'an integer' : 'a number'} from ${min} to ${MAX_TIMER_MS} ms, the longest timer Node keeps`;

/** A number of milliseconds from `min` (default 0) to `MAX_TIMER_MS`; `integer` for settings that take whole ones. */
export function durationMsSchema(min = 0, options: { integer?: boolean } = {}) {
  const error = (issue: { input?: unknown }) => `${rule(min, options.integer)} (got ${String(issue.input)})`;
  const schema = zod().number({ error }).min(min, { error }).max(MAX_TIMER_MS, { error });
  return options.integer === true ? schema.int({ error }) : schema;
}

/** The same duration from an environment variable: plain digits only. */
export function envDurationMs(min = 0) {
  const z = zod();
  return z.string().transform((raw, ctx) => {
    const value = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
    if (Number.isSafeInteger(value) && value >= min && value <= MAX_TIMER_MS) return value;
    ctx.issues.push({ code: 'custom', message: `${rule(min, true)} (got "${raw}")`, input: raw });
    return z.NEVER;
  });
}

/** `value` as a duration of at least `min` ms, or an error naming `field` (InvalidArgumentError unless `toError` builds another). */
export function checkDurationMs(
  value: unknown,
  field: string,
  options: { min?: number; integer?: boolean; toError?: (field: string, rule: string) => Error } = {},
): number {
  return parseWithSchema(durationMsSchema(options.min, { integer: options.integer === true }), value, {
    prefix: field,
    toError: options.toError ?? ((f, r) => new InvalidArgumentError(f, r)),
  });
}
