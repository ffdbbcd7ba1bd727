/**
 * The text and id rules of every boundary, pure: a string PostgreSQL stores unchanged (`requireText`),
 * an id short enough to be part of an index key (`requireKey`), and how a refused value is shown in an
 * error (`describeValue`). Each refusal is an InvalidArgumentError naming the field.
 */
import { InvalidArgumentError } from '../errors.js';
import { textProblem, utf8Bytes } from './well-formed-text.js';

/**
 * Namespaces, conversation ids and message ids are index keys: PostgreSQL refuses a btree entry over
 * 2,704 bytes, and (namespace, conversation_id, id) must fit in one. 256 B + 1 KiB + 1 KiB (plus the
 * `clip-archive-` prefix of one id) stays below that.
 */
export const MAX_KEY_BYTES = 1024;
export const MAX_NAMESPACE_BYTES = 256;

/** A value as an error shows it: strings quoted and cut at 40 characters, numbers as written, else the kind. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number') return String(value);
  return typeof value;
}

/** A string (non-empty unless `allowEmpty`) that PostgreSQL stores unchanged: no U+0000, no lone surrogate. */
export function requireText(value: unknown, field: string, options: { allowEmpty?: boolean } = {}): string {
  if (typeof value !== 'string') throw new InvalidArgumentError(field, `must be a string, got ${describeValue(value)}`);
  if (!options.allowEmpty && value.length === 0) throw new InvalidArgumentError(field, 'must not be empty');
  const problem = textProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(field, problem);
  return value;
}

/** Why `text` cannot be an index key (over `maxBytes` of UTF-8), or undefined when it can. */
export function keyProblem(text: string, maxBytes = MAX_KEY_BYTES): string | undefined {
  const bytes = utf8Bytes(text);
  return bytes > maxBytes ? `must be at most ${maxBytes} bytes of UTF-8, got ${bytes}` : undefined;
}

/** A `requireText` that is also short enough to be part of an index key. */
export function requireKey(value: unknown, field: string, maxBytes = MAX_KEY_BYTES): string {
  const text = requireText(value, field);
  const problem = keyProblem(text, maxBytes);
  if (problem !== undefined) throw new InvalidArgumentError(field, problem);
  return text;
}

/** An array of non-empty texts (ids for deletes and operation rows). */
export function requireTextArray(value: unknown, field: string): string[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(field, `must be an array, got ${describeValue(value)}`);
  return value.map((item, index) => requireText(item, `${field}[${index}]`));
}
