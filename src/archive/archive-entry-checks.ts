/**
 * The archive port's input rules, pure and shared by every Archive adapter: what an entry must
 * hold, which filters are valid, and the port's time order. Each refusal is an InvalidArgumentError
 * naming the field.
 */
import type { ArchiveEntry, ArchiveKind } from '../conversation/types.js';
import { InvalidArgumentError } from '../errors.js';
import type { ArchiveFilter } from './archive.js';

const KINDS: ReadonlySet<string> = new Set<ArchiveKind>(['summary', 'transcript', 'tool_output']);
const KIND_RULE = "must be 'summary', 'transcript' or 'tool_output'";

/** Milliseconds since the epoch of an ISO time; throws naming the field when it does not parse. */
export function isoToMs(value: unknown, field: string): number {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw new InvalidArgumentError(field, 'must be an ISO 8601 time');
  return ms;
}

/**
 * The archive takes any non-empty id: it only ever receives ids the live store took (`conversation/conversation-id.ts`
 * is that rule), and its scope must hold for any id at all (`test/archive/archive-scope.test.ts` writes ids with U+0000).
 */
export function requireConversationId(conversationId: unknown, field = 'conversationId'): string {
  if (typeof conversationId !== 'string' || conversationId.length === 0) {
    throw new InvalidArgumentError(field, 'must be a non-empty string');
  }
  return conversationId;
}

export function requireLabels(labels: unknown): string[] {
  if (!Array.isArray(labels) || labels.some((label) => typeof label !== 'string')) {
    throw new InvalidArgumentError('labels', 'must be an array of strings');
  }
  return labels as string[];
}

/** A mark's parent: a non-empty string, or null to clear the mark. */
export function requireParentLabel(parentLabel: unknown, field = 'parentLabel'): string | null {
  if (parentLabel !== null && (typeof parentLabel !== 'string' || parentLabel.length === 0)) {
    throw new InvalidArgumentError(field, 'must be a non-empty string or null');
  }
  return parentLabel;
}

/** `markEach`'s marks, checked, one per label (the last of a label wins, as if marked one after another). */
export function requireMarks(marks: unknown): Map<string, string | null> {
  if (!Array.isArray(marks)) throw new InvalidArgumentError('marks', 'must be an array of { label, parentLabel }');
  const byLabel = new Map<string, string | null>();
  marks.forEach((mark: unknown, i) => {
    const { label, parentLabel } = (mark ?? {}) as { label?: unknown; parentLabel?: unknown };
    if (typeof label !== 'string') throw new InvalidArgumentError(`marks[${i}].label`, 'must be a string');
    byLabel.set(label, requireParentLabel(parentLabel ?? null, `marks[${i}].parentLabel`));
  });
  return byLabel;
}

/** A filter's values, checked: depth a non-negative integer, kind one of the archive's, from/to ISO times. */
export interface CheckedFilter {
  conversationId: string;
  depth?: number;
  kind?: ArchiveKind;
  fromMs?: number;
  toMs?: number;
  unmarkedOnly: boolean;
}

export function checkFilter(filter: ArchiveFilter & { unmarkedOnly?: boolean }): CheckedFilter {
  const checked: CheckedFilter = { conversationId: requireConversationId(filter?.conversationId), unmarkedOnly: filter.unmarkedOnly === true };
  if (filter.depth !== undefined) {
    if (!Number.isInteger(filter.depth) || filter.depth < 0) throw new InvalidArgumentError('depth', 'must be an integer >= 0');
    checked.depth = filter.depth;
  }
  if (filter.kind !== undefined) {
    if (!KINDS.has(filter.kind)) throw new InvalidArgumentError('kind', KIND_RULE);
    checked.kind = filter.kind;
  }
  if (filter.from !== undefined) checked.fromMs = isoToMs(filter.from, 'from');
  if (filter.to !== undefined) checked.toMs = isoToMs(filter.to, 'to');
  return checked;
}

/** Reject entries that would store nonsense, naming the field. Returns the parsed times. */
export function validateEntry(entry: ArchiveEntry, index: number): { startMs: number; endMs: number } {
  const field = (name: string) => `entries[${index}].${name}`;
  if (typeof entry !== 'object' || entry === null) throw new InvalidArgumentError(`entries[${index}]`, 'must be an object');
  if (!KINDS.has(entry.kind)) throw new InvalidArgumentError(field('kind'), KIND_RULE);
  for (const name of ['label', 'conversationId'] as const) {
    if (typeof entry[name] !== 'string' || entry[name].length === 0) throw new InvalidArgumentError(field(name), 'must be a non-empty string');
  }
  if (typeof entry.operationId !== 'string') throw new InvalidArgumentError(field('operationId'), 'must be a string');
  if (typeof entry.content !== 'string') throw new InvalidArgumentError(field('content'), 'must be a string');
  for (const name of ['depth', 'count'] as const) {
    if (!Number.isInteger(entry[name]) || entry[name] < 0 || entry[name] > 2 ** 31 - 1) {
      throw new InvalidArgumentError(field(name), 'must be an integer >= 0');
    }
  }
  if (!Array.isArray(entry.sourceIds) || entry.sourceIds.some((id) => typeof id !== 'string')) {
    throw new InvalidArgumentError(field('sourceIds'), 'must be an array of strings');
  }
  if (entry.parentLabel !== undefined && entry.parentLabel !== null && typeof entry.parentLabel !== 'string') {
    throw new InvalidArgumentError(field('parentLabel'), 'must be a string when set');
  }
  if (entry.messages !== undefined && !Array.isArray(entry.messages)) throw new InvalidArgumentError(field('messages'), 'must be an array when set');
  if (entry.sessions !== undefined && (!Array.isArray(entry.sessions) || entry.sessions.some((id) => typeof id !== 'string' || id.length === 0))) {
    throw new InvalidArgumentError(field('sessions'), 'must be an array of non-empty strings when set');
  }
  const startMs = Date.parse(entry.start);
  const endMs = Date.parse(entry.end);
  if (typeof entry.start !== 'string' || !Number.isFinite(startMs)) throw new InvalidArgumentError(field('start'), 'must be an ISO 8601 time');
  if (typeof entry.end !== 'string' || !Number.isFinite(endMs)) throw new InvalidArgumentError(field('end'), 'must be an ISO 8601 time');
  if (endMs < startMs) throw new InvalidArgumentError(field('end'), 'must not be before start');
  return { startMs, endMs };
}

/** Time order of the port: start, then end, then label (code-point order, locale-independent). */
export function compareEntriesByTime(
  a: { entry: ArchiveEntry; startMs: number; endMs: number },
  b: { entry: ArchiveEntry; startMs: number; endMs: number },
): number {
  if (a.startMs !== b.startMs) return a.startMs - b.startMs;
  if (a.endMs !== b.endMs) return a.endMs - b.endMs;
  return a.entry.label < b.entry.label ? -1 : a.entry.label > b.entry.label ? 1 : 0;
}
