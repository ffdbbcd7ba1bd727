/**
 * The text and id rules of every boundary, pure: a string PostgreSQL stores unchanged (`requireText`),
 * an id short enough to be part of an index key (`requireKey`), and how a refused value is shown in an
 * error (`describeValue`). Each refusal is an InvalidArgumentError naming the field.
 */
import { InvalidArgumentError } from '../errors.js';
import { textProblem, utf8Bytes } from './well-formed-text.js';
import { zod } from '../zod-on-demand.js';

/**
 * Namespaces, conversation ids and message ids are index keys: PostgreSQL refuses a btree entry over
 * 2,704 bytes, and (namespace, conversation_id, id) must fit in one. 256 B + 1 KiB + 1 KiB (plus the
 * `clip-archive-` prefix of one id) stays below that.
 */
export const MAX_KEY_BYTES = 1024;
export const MAX_NAMESPACE_BYTES = 256;
/** A session id is metadata shown by `inspect` and stored on every archived batch: short, like a namespace. */
export const MAX_SESSION_ID_BYTES = 256;

/** A value as an error shows it: strings quoted and cut at 40 characters, numbers as written, else the kind. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number') return String(value);
  return typeof value;
}

/** Why `text` cannot be an index key (over `maxBytes` of UTF-8), or undefined when it can. */
export function keyProblem(text: string, maxBytes = MAX_KEY_BYTES): string | undefined {
  const bytes = utf8Bytes(text);
  return bytes > maxBytes ? `must be at most ${maxBytes} bytes of UTF-8, got ${bytes}` : undefined;
}

export interface TextRule {
  /** The empty string is allowed (message content); ids and names must not be empty. */
  allowEmpty?: boolean;
  /** The text is part of an index key: at most this many bytes of UTF-8. */
  maxKeyBytes?: number;
}

/** Why `text` breaks the rule: empty when it may not be, U+0000, a lone surrogate, too long for a key. */
export function storedTextProblem(text: string, rule: TextRule = {}): string | undefined {
  if (!rule.allowEmpty && text.length === 0) return 'must not be empty';
  return textProblem(text) ?? (rule.maxKeyBytes === undefined ? undefined : keyProblem(text, rule.maxKeyBytes));
}

/** The same rule as a zod schema, for the boundaries parsed with one. */
export function storedTextSchema(rule: TextRule = {}) {
  return zod()
    .string()
    .check((ctx) => {
      const problem = storedTextProblem(ctx.value, rule);
      if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
    });
}

/** A string (non-empty unless `allowEmpty`) that PostgreSQL stores unchanged: no U+0000, no lone surrogate. */
export function requireText(value: unknown, field: string, options: { allowEmpty?: boolean } = {}): string {
  if (typeof value !== 'string') throw new InvalidArgumentError(field, `must be a string, got ${describeValue(value)}`);
  const problem = storedTextProblem(value, options);
  if (problem !== undefined) throw new InvalidArgumentError(field, problem);
  return value;
}

/** A `requireText` that is also short enough to be part of an index key. */
export function requireKey(value: unknown, field: string, maxBytes = MAX_KEY_BYTES): string {
  if (typeof value !== 'string') throw new InvalidArgumentError(field, `must be a string, got ${describeValue(value)}`);
  const problem = storedTextProblem(value, { maxKeyBytes: maxBytes });
  if (problem !== undefined) throw new InvalidArgumentError(field, problem);
  return value;
}

/** An array of non-empty texts (ids for deletes and operation rows). */
export function requireTextArray(value: unknown, field: string): string[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(field, `must be an array, got ${describeValue(value)}`);
  return value.map((item, index) => requireText(item, `${field}[${index}]`));
}
