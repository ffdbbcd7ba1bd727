/**
 * Checks what callers hand to `append` before anything reaches the database, so bad input fails
 * with an InvalidArgumentError naming the field instead of a driver error (or silent garbage).
 */
import { randomUUID } from 'node:crypto';
import type { Role, ToolCall } from '../../agent/types.js';
import { InvalidArgumentError } from '../../errors.js';
import type { StoredContent } from './schema.js';

const ROLES: ReadonlySet<string> = new Set<Role>(['system', 'user', 'assistant', 'tool']);

/** A message ready to insert: id and time filled in, content shaped for the jsonb column. */
export interface NormalizedMessage {
  id: string;
  role: Role;
  content: StoredContent;
  createdAt: string;
}

/** A non-empty string PostgreSQL can store (text columns refuse U+0000). */
export function requireText(value: unknown, field: string, options: { allowEmpty?: boolean } = {}): string {
  if (typeof value !== 'string') throw new InvalidArgumentError(field, `must be a string, got ${describe(value)}`);
  if (!options.allowEmpty && value.length === 0) throw new InvalidArgumentError(field, 'must not be empty');
  if (value.includes('\u0000')) throw new InvalidArgumentError(field, 'must not contain U+0000 (PostgreSQL cannot store it)');
  return value;
}

/** An array of ids (for deletes and operation rows). */
export function requireTextArray(value: unknown, field: string): string[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(field, `must be an array, got ${describe(value)}`);
  return value.map((item, index) => requireText(item, `${field}[${index}]`));
}

/** A Date or a date string, as a canonical ISO string. */
export function requireTime(value: unknown, field: string): string {
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : undefined;
  if (date === undefined) throw new InvalidArgumentError(field, `must be a Date or an ISO 8601 string, got ${describe(value)}`);
  const time = date.getTime();
  // Years 0001-9999: what both toISOString and PostgreSQL read back unchanged.
  if (Number.isNaN(time) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) {
    throw new InvalidArgumentError(field, `must be a valid date between years 1 and 9999, got ${JSON.stringify(String(value))}`);
  }
  return date.toISOString();
}

/** Validate `append` input; `now` fills missing createdAt values. */
export function normalizeNewMessages(messages: unknown, now: Date): NormalizedMessage[] {
  if (!Array.isArray(messages)) throw new InvalidArgumentError('messages', `must be an array, got ${describe(messages)}`);
  return messages.map((message: unknown, index) => normalizeOne(message, `messages[${index}]`, now));
}

function normalizeOne(value: unknown, field: string, now: Date): NormalizedMessage {
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError(field, `must be an object, got ${describe(value)}`);
  const message = value as Record<string, unknown>;
  if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
    throw new InvalidArgumentError(`${field}.role`, `must be one of system, user, assistant, tool; got ${describe(message.role)}`);
  }
  if (message.kind !== undefined && message.kind !== 'message') {
    throw new InvalidArgumentError(`${field}.kind`, `must be 'message' or absent (the clip-archive is written by commitCompaction); got ${describe(message.kind)}`);
  }
  const content: StoredContent = { text: requireText(message.content, `${field}.content`, { allowEmpty: true }) };
  if (message.toolCalls !== undefined) content.toolCalls = normalizeToolCalls(message.toolCalls, `${field}.toolCalls`);
  if (message.toolCallId !== undefined) content.toolCallId = requireText(message.toolCallId, `${field}.toolCallId`);
  if (message.name !== undefined) content.name = requireText(message.name, `${field}.name`);
  return {
    id: message.id === undefined ? randomUUID() : requireText(message.id, `${field}.id`),
    role: message.role as Role,
    content,
    createdAt: message.createdAt === undefined ? now.toISOString() : requireTime(message.createdAt, `${field}.createdAt`),
  };
}

function normalizeToolCalls(value: unknown, field: string): ToolCall[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(field, `must be an array, got ${describe(value)}`);
  return value.map((item: unknown, index) => {
    const at = `${field}[${index}]`;
    if (typeof item !== 'object' || item === null) throw new InvalidArgumentError(at, `must be an object, got ${describe(item)}`);
    const call = item as Record<string, unknown>;
    if (call.type !== 'function') throw new InvalidArgumentError(`${at}.type`, `must be 'function', got ${describe(call.type)}`);
    const fn = call.function as Record<string, unknown> | null | undefined;
    if (typeof fn !== 'object' || fn === null) throw new InvalidArgumentError(`${at}.function`, `must be an object, got ${describe(fn)}`);
    return {
      id: requireText(call.id, `${at}.id`),
      type: 'function',
      function: {
        name: requireText(fn.name, `${at}.function.name`),
        arguments: requireText(fn.arguments, `${at}.function.arguments`, { allowEmpty: true }),
      },
    };
  });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  return typeof value;
}
