/**
 * The size limit of one appended message: its default, its ceiling and its validation. Every store
 * (PostgreSQL, PGlite, in-memory) and the JSONL import apply the same rule.
 */
import { InvalidConfigError } from '../errors.js';

/** 10 MiB: far above any real turn, low enough that a runaway tool output cannot flood the table. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** PostgreSQL refuses a jsonb value of 256 MiB or more; half of that leaves room for escaping. */
export const MAX_MESSAGE_BYTES_LIMIT = 128 * 1024 * 1024;

/** A maxMessageBytes value from any source (store option, override), refused naming `field`. */
export function validateMaxMessageBytes(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_MESSAGE_BYTES_LIMIT) {
    throw new InvalidConfigError(field, `must be an integer from 1 to ${MAX_MESSAGE_BYTES_LIMIT} (got ${String(value)})`);
  }
  return value;
}
