/**
 * Validation of memory_read arguments, pure. Errors name the argument and the rule.
 */
import { InvalidArgumentError } from '../errors.js';
import type { ArchiveKind } from '../conversation/types.js';
import { parseIsoTime } from '../conversation/iso-time.js';
import { textProblem } from '../conversation/well-formed-text.js';

export interface MemoryReadArgs {
  query?: string;
  label?: string;
  depth?: number;
  kind?: ArchiveKind;
  from?: string;
  to?: string;
  limit: number;
  /** Tokens the whole answer may take (`max_tokens`); absent: the tool's configured budget. */
  maxTokens?: number;
}

export const MEMORY_READ_DEFAULT_LIMIT = 5;
export const MEMORY_READ_MAX_LIMIT = 20;
/** A query longer than a few paragraphs is not a search; the cap also bounds the embedder's input. */
export const MEMORY_READ_MAX_QUERY_CHARS = 2_000;
/** Labels are `compaction-batch-{conversationId}-{ISO time}[~suffix]`, and a conversation id may take 1 KiB. */
export const MEMORY_READ_MAX_LABEL_CHARS = 2_000;
/**
 * One token budget for a whole search answer, filled best first. 3,000 tokens holds about 25 windows of three
 * short messages: on LoCoMo, enough for the evidence of most questions (src/eval/README.md, ablation).
 */
export const MEMORY_READ_DEFAULT_TOKENS = 3_000;
/** A model may ask for less or more within these limits: below 200 not even one window fits; above 12,000 the answer crowds the window. */
export const MEMORY_READ_MIN_TOKENS = 200;
export const MEMORY_READ_MAX_TOKENS = 12_000;
const KNOWN = new Set(['query', 'label', 'depth', 'kind', 'from', 'to', 'limit', 'max_tokens']);

function optionalString(raw: Record<string, unknown>, key: string, maxLength: number): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new InvalidArgumentError(key, 'must be a string');
  if (value.trim() === '') throw new InvalidArgumentError(key, 'must not be empty');
  if (value.length > maxLength) throw new InvalidArgumentError(key, `must be at most ${maxLength} characters`);
  // Model output can carry U+0000 or half an emoji; refuse them here rather than deep in a search.
  const problem = textProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(key, problem);
  return value;
}

function optionalTime(raw: Record<string, unknown>, key: string): string | undefined {
  const value = optionalString(raw, key, 40);
  if (value === undefined) return undefined;
  return parseIsoTime(value, key);
}

function optionalInt(raw: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(key, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** Accepts the parsed arguments object or the JSON string a model sends. */
export function parseMemoryReadArgs(input: unknown): MemoryReadArgs {
  let raw: unknown = input;
  if (typeof input === 'string') {
    try {
      raw = JSON.parse(input);
    } catch {
      throw new InvalidArgumentError('arguments', 'must be a JSON object');
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InvalidArgumentError('arguments', 'must be an object');
  const record = raw as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!KNOWN.has(key)) throw new InvalidArgumentError(key, `is not an argument of memory_read (known: ${[...KNOWN].join(', ')})`);
  }
  const args: MemoryReadArgs = { limit: optionalInt(record, 'limit', 1, MEMORY_READ_MAX_LIMIT) ?? MEMORY_READ_DEFAULT_LIMIT };
  const query = optionalString(record, 'query', MEMORY_READ_MAX_QUERY_CHARS);
  const label = optionalString(record, 'label', MEMORY_READ_MAX_LABEL_CHARS);
  if (query === undefined && label === undefined) throw new InvalidArgumentError('query', 'give a query to search, or a label to read');
  if (query !== undefined && label !== undefined) throw new InvalidArgumentError('label', 'give either query or label, not both');
  if (query !== undefined) args.query = query;
  if (label !== undefined) args.label = label;
  const maxTokens = optionalInt(record, 'max_tokens', MEMORY_READ_MIN_TOKENS, MEMORY_READ_MAX_TOKENS);
  if (maxTokens !== undefined) args.maxTokens = maxTokens;
  const depth = optionalInt(record, 'depth', 0, 1000);
  if (depth !== undefined) args.depth = depth;
  const kind = record.kind;
  if (kind !== undefined && kind !== null) {
    if (kind !== 'summary' && kind !== 'transcript') throw new InvalidArgumentError('kind', 'must be "summary" or "transcript"');
    args.kind = kind;
  }
  const from = optionalTime(record, 'from');
  const to = optionalTime(record, 'to');
  if (from !== undefined) args.from = from;
  if (to !== undefined) args.to = to;
  if (from !== undefined && to !== undefined && from > to) throw new InvalidArgumentError('from', 'must not be after to');
  return args;
}
