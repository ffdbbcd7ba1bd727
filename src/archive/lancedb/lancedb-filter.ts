/**
 * The one place where values become LanceDB (DataFusion SQL) where-clauses.
 *
 * Escaping rule: a string becomes a SQL string literal in single quotes with every `'` doubled. DataFusion
 * gives backslashes no meaning inside a plain `'...'` literal (checked against LanceDB 0.37: `'a\b'` matches
 * the two-character-plus-backslash value exactly), so nothing else needs escaping; `%` and `_` only matter to
 * LIKE, which is never used. Numbers must be finite (integers where the column is an integer).
 * Every clause starts with the namespace and the conversation: no query can reach another conversation's rows.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { ArchiveFilter } from '../archive.js';
import { checkFilter, isoToMs, requireConversationId } from '../archive-entry-checks.js';
import { COLUMN } from './lancedb-schema.js';

/** The filter rules live with the port (every adapter checks the same); re-exported for the adapter's imports. */
export { isoToMs, requireConversationId };

/** A SQL string literal: `it's` -> `'it''s'`. */
export function sqlString(value: string): string {
  if (typeof value !== 'string') throw new InvalidArgumentError('filter value', 'must be a string');
  return `'${value.replace(/'/g, "''")}'`;
}

/** A SQL number literal; throws unless finite (and an integer when `integer` is set). */
export function sqlNumber(value: number, field: string, options: { integer?: boolean } = {}): string {
  if (typeof value !== 'number' || !Number.isFinite(value) || (options.integer && !Number.isInteger(value))) {
    throw new InvalidArgumentError(field, options.integer ? 'must be an integer' : 'must be a finite number');
  }
  return String(value);
}

/** `(a, b, c)` for an IN list of strings. The caller keeps lists short (see `chunked`). */
export function sqlStringList(values: readonly string[]): string {
  return `(${values.map(sqlString).join(', ')})`;
}

/** The scope every query starts with. */
export function scopeWhere(namespace: string, conversationId: string): string {
  return `${COLUMN.namespace} = ${sqlString(namespace)} AND ${COLUMN.conversationId} = ${sqlString(requireConversationId(conversationId))}`;
}

/**
 * The where-clause for a filter: scope, then depth, kind, and time overlap with [from, to]
 * (an entry overlaps when it ends at or after `from` and starts at or before `to`).
 */
export function filterWhere(namespace: string, filter: ArchiveFilter & { unmarkedOnly?: boolean }): string {
  const checked = checkFilter(filter);
  const clauses = [scopeWhere(namespace, checked.conversationId)];
  if (checked.depth !== undefined) clauses.push(`${COLUMN.depth} = ${sqlNumber(checked.depth, 'depth', { integer: true })}`);
  if (checked.kind !== undefined) clauses.push(`${COLUMN.kind} = ${sqlString(checked.kind)}`);
  if (checked.fromMs !== undefined) clauses.push(`${COLUMN.endMs} >= ${sqlNumber(checked.fromMs, 'from')}`);
  if (checked.toMs !== undefined) clauses.push(`${COLUMN.startMs} <= ${sqlNumber(checked.toMs, 'to')}`);
  if (checked.unmarkedOnly) clauses.push(`${COLUMN.parentLabel} IS NULL`);
  return clauses.join(' AND ');
}

/** Scope plus `label IN (...)`. */
export function labelsWhere(namespace: string, conversationId: string, labels: readonly string[]): string {
  return `${scopeWhere(namespace, conversationId)} AND ${COLUMN.label} IN ${sqlStringList(labels)}`;
}

/** Labels in slices, so an IN list never grows past what a SQL parser handles comfortably. */
export function chunked<T>(items: readonly T[], size = 500): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}
