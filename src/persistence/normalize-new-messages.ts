/**
 * Checks what callers hand to `append` before anything reaches a store, so bad input fails with an
 * InvalidArgumentError naming the field instead of a driver error (or silent garbage). Pure; every
 * PersistenceProvider adapter runs it.
 */
import { randomUUID } from 'node:crypto';
import type { Role, ToolCall } from '../conversation/types.js';
import { parseIsoTime } from '../conversation/iso-time.js';
import { describeValue, requireKey, requireText } from '../conversation/text.js';
import { utf8Bytes } from '../conversation/well-formed-text.js';
import { InvalidArgumentError } from '../errors.js';

const ROLES: ReadonlySet<string> = new Set<Role>(['system', 'user', 'assistant', 'tool']);

/** A message's content as every store keeps it (the `content` jsonb column of the Kysely store). */
export interface StoredContent {
  text: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  name?: string;
}

/** A message ready to insert: id filled in, content shaped for the jsonb column. */
export interface NormalizedMessage {
  id: string;
  role: Role;
  content: StoredContent;
  /** Absent when the caller gave none: `append` stamps it under the conversation's lock. */
  createdAt?: string;
}

export interface NormalizeOptions {
  /** UTF-8 bytes one message's text (content, tool calls, name, ids) may take. */
  maxMessageBytes: number;
}

/** Validate `append` input, each message on its own (pairing across messages is checked by the caller). */
export function normalizeNewMessages(messages: unknown, options: NormalizeOptions): NormalizedMessage[] {
  if (!Array.isArray(messages)) throw new InvalidArgumentError('messages', `must be an array, got ${describeValue(messages)}`);
  return messages.map((message: unknown, index) => normalizeOne(message, `messages[${index}]`, options));
}

function normalizeOne(value: unknown, field: string, options: NormalizeOptions): NormalizedMessage {
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError(field, `must be an object, got ${describeValue(value)}`);
  const message = value as Record<string, unknown>;
  if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
    throw new InvalidArgumentError(`${field}.role`, `must be one of system, user, assistant, tool; got ${describeValue(message.role)}`);
  }
  if (message.kind !== undefined && message.kind !== 'message') {
    throw new InvalidArgumentError(`${field}.kind`, `must be 'message' or absent (the clip-archive is written by commitCompaction); got ${describeValue(message.kind)}`);
  }
  const content: StoredContent = { text: requireText(message.content, `${field}.content`, { allowEmpty: true }) };
  if (message.toolCalls !== undefined) content.toolCalls = normalizeToolCalls(message.toolCalls, `${field}.toolCalls`);
  if (message.toolCallId !== undefined) content.toolCallId = requireText(message.toolCallId, `${field}.toolCallId`);
  if (message.name !== undefined) content.name = requireText(message.name, `${field}.name`);
  if (message.role === 'tool' && content.toolCallId === undefined) {
    throw new InvalidArgumentError(`${field}.toolCallId`, 'is required on a tool message: the id of the assistant tool call it answers');
  }
  const id = message.id === undefined ? randomUUID() : requireKey(message.id, `${field}.id`);
  requireSize(content, id, field, options.maxMessageBytes);
  return {
    id,
    role: message.role as Role,
    content,
    // A missing time stays missing: append stamps it under the conversation's row lock.
    ...(message.createdAt === undefined ? {} : { createdAt: parseIsoTime(message.createdAt, `${field}.createdAt`) }),
  };
}

/** Caps one message's UTF-8 bytes, so a runaway tool output cannot fill the table or the context. */
function requireSize(content: StoredContent, id: string, field: string, maxBytes: number): void {
  const contentBytes = utf8Bytes(content.text);
  if (contentBytes > maxBytes) {
    throw new InvalidArgumentError(`${field}.content`, `is ${contentBytes} bytes of UTF-8, over the maximum of ${maxBytes} (maxMessageBytes)`);
  }
  const parts = [id, content.toolCallId ?? '', content.name ?? '', ...(content.toolCalls ?? []).flatMap((c) => [c.id, c.function.name, c.function.arguments])];
  const total = parts.reduce((sum, part) => sum + utf8Bytes(part), contentBytes);
  if (total > maxBytes) {
    throw new InvalidArgumentError(field, `is ${total} bytes of UTF-8 (content, tool calls, name and ids), over the maximum of ${maxBytes} (maxMessageBytes)`);
  }
}

function normalizeToolCalls(value: unknown, field: string): ToolCall[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(field, `must be an array, got ${describeValue(value)}`);
  // A result names its call by id: two calls of one message with the same id could not be told apart.
  const seen = new Map<string, number>();
  return value.map((item: unknown, index) => {
    const at = `${field}[${index}]`;
    if (typeof item !== 'object' || item === null) throw new InvalidArgumentError(at, `must be an object, got ${describeValue(item)}`);
    const call = item as Record<string, unknown>;
    if (call.type !== 'function') throw new InvalidArgumentError(`${at}.type`, `must be 'function', got ${describeValue(call.type)}`);
    const fn = call.function as Record<string, unknown> | null | undefined;
    if (typeof fn !== 'object' || fn === null) throw new InvalidArgumentError(`${at}.function`, `must be an object, got ${describeValue(fn)}`);
    const id = requireText(call.id, `${at}.id`);
    const first = seen.get(id);
    if (first !== undefined) throw new InvalidArgumentError(`${at}.id`, `duplicates ${field}[${first}].id (${JSON.stringify(id)})`);
    seen.set(id, index);
    return {
      id,
      type: 'function',
      function: {
        name: requireText(fn.name, `${at}.function.name`),
        arguments: requireText(fn.arguments, `${at}.function.arguments`, { allowEmpty: true }),
      },
    };
  });
}
