/**
 * `memfold import` lines, pure: one message a line, `{role, content, tool_calls?, tool_call_id?, name?,
 * id?, created_at?, conversation_id?, session_id?}` (camelCase accepted too). Each line goes through the per-message
 * rules `append` applies (`normalizeNewMessages`: roles, text, tool calls, times, maxMessageBytes), and
 * an error names the line and the field as the line spells it (`line 3.tool_call_id`).
 *
 * A line without an id gets `line-{lineNumber}-{first 12 hex digits of the sha256 of the line's text}`,
 * so that importing the same file again meets the same ids and can skip what is already stored.
 */
import { createHash } from 'node:crypto';
import type { NewMessage } from '../../conversation/types.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../persistence/message-size-limit.js';
import { InvalidArgumentError } from '../../errors.js';
import { readJsonlObjects, type JsonlObject } from '../../eval/datasets/jsonl-dataset.js';
import { requireConversationId } from '../../conversation/conversation-id.js';
import { normalizeNewMessages, type NormalizedMessage } from '../../persistence/normalize-new-messages.js';

/** One message line of an import file. */
export interface ImportedLine {
  lineNumber: number;
  /** Absent when the line names none: `--conversation` applies (`conversationOf`). */
  conversationId?: string;
  /** The message as `append` will store it: id filled in, time canonical. */
  message: NewMessage & { id: string };
  /** The checked row, in the shape `append`'s batch checks read. */
  row: NormalizedMessage;
  /** How the line spells the tool call id field, for errors found across lines. */
  toolCallIdField: string;
}

/**
 * How the import reads a file: a line at most twice `maxMessageBytes` plus 64 KiB (JSON escapes a quote or a
 * backslash in two bytes; the ids and field names fit in the rest), so a file without line breaks is refused at
 * that length instead of filling memory.
 */
export function importLineReading(maxMessageBytes: number): { maxLineBytes: number; why: string } {
  return { maxLineBytes: 2 * maxMessageBytes + 64 * 1024, why: 'twice MEMFOLD_MAX_MESSAGE_BYTES plus 64 KiB' };
}

/** The id of a line that has none: stable for the same text at the same line. */
export function derivedLineId(lineNumber: number, text: string): string {
  return `line-${lineNumber}-${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
}

/** The key a line uses for a field that has a snake_case and a camelCase spelling (snake_case wins, as when reading). */
function keyOf(value: Record<string, unknown>, snake: string, camel: string): string {
  return value[snake] === undefined && value[camel] !== undefined ? camel : snake;
}

/** JSON's null for an optional field means absent. */
function present(value: unknown): unknown {
  return value === null ? undefined : value;
}

/**
 * An error of `normalizeNewMessages` for `messages[0]` (or of the batch checks for `messages[index]`)
 * renamed to the file's line, with the field spelled as in the file.
 */
export function atLine(error: unknown, where: string, fields: Readonly<Record<string, string>>, index = 0): unknown {
  if (!InvalidArgumentError.isInstance(error)) return error;
  const prefix = `messages[${index}]`;
  if (!error.field.startsWith(prefix)) return error;
  const rename = (text: string) =>
    text.replaceAll(new RegExp(`messages\\[${index}\\](?:\\.(\\w+))?`, 'g'), (_, name: string | undefined) =>
      name === undefined ? where : `${where}.${fields[name] ?? name}`,
    );
  const rule = error.message.slice(`Invalid argument ${error.field}: `.length);
  return new InvalidArgumentError(rename(error.field), rename(rule));
}

/** Parse and check one line on its own (`maxMessageBytes` as configured). */
export function parseImportLine(line: JsonlObject, maxMessageBytes: number): ImportedLine {
  const { value, where, lineNumber } = line;
  const fields = {
    toolCalls: keyOf(value, 'tool_calls', 'toolCalls'),
    toolCallId: keyOf(value, 'tool_call_id', 'toolCallId'),
    createdAt: keyOf(value, 'created_at', 'createdAt'),
    sessionId: keyOf(value, 'session_id', 'sessionId'),
  };
  const conversationField = keyOf(value, 'conversation_id', 'conversationId');
  const rawConversation = present(value[conversationField]);
  const conversationId = rawConversation === undefined ? undefined : requireConversationId(rawConversation, `${where}.${conversationField}`);
  const candidate = {
    role: value.role,
    // An assistant message that only calls tools often has `content: null`.
    content: present(value.content) ?? '',
    toolCalls: present(value[fields.toolCalls]),
    toolCallId: present(value[fields.toolCallId]),
    name: present(value.name),
    id: present(value.id) ?? derivedLineId(lineNumber, line.text),
    createdAt: present(value[fields.createdAt]),
    sessionId: present(value[fields.sessionId]),
  };
  let row: NormalizedMessage;
  try {
    [row] = normalizeNewMessages([candidate], { maxMessageBytes }) as [NormalizedMessage];
  } catch (error) {
    throw atLine(error, where, fields);
  }
  return { lineNumber, ...(conversationId === undefined ? {} : { conversationId }), message: toNewMessage(row), row, toolCallIdField: fields.toolCallId };
}

function toNewMessage(row: NormalizedMessage): NewMessage & { id: string } {
  const { text, toolCalls, toolCallId, name, sessionId } = row.content;
  return {
    id: row.id,
    role: row.role,
    content: text,
    ...(toolCalls ? { toolCalls } : {}),
    ...(toolCallId !== undefined ? { toolCallId } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(row.createdAt !== undefined ? { createdAt: row.createdAt } : {}),
  };
}

/** The line's conversation, else `fallback` (`--conversation`); a line with neither is refused naming it. */
export function conversationOf(line: ImportedLine, fallback: string | undefined): string {
  const id = line.conversationId ?? fallback;
  if (id === undefined) {
    throw new InvalidArgumentError(
      `line ${line.lineNumber}.conversation_id`,
      'is missing: name the conversation on the line, or give --conversation for lines that name none',
    );
  }
  return id;
}

/** Every line of a JSONL text, checked on its own (pure; the command streams files instead). */
export function parseJsonlMessages(text: string, maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES): ImportedLine[] {
  return readJsonlObjects(text).map((line) => parseImportLine(line, maxMessageBytes));
}

/** Messages by conversation, in file order; `fallback` names lines without one. Linear in the lines. */
export function groupByConversation(lines: readonly ImportedLine[], fallback: string | undefined): Map<string, NewMessage[]> {
  const groups = new Map<string, NewMessage[]>();
  for (const line of lines) {
    const id = conversationOf(line, fallback);
    const group = groups.get(id) ?? [];
    if (group.length === 0) groups.set(id, group);
    group.push(line.message);
  }
  return groups;
}
