/**
 * `memfold import <file.jsonl>`: one message a line, `{role, content, tool_calls?, tool_call_id?,
 * name?, created_at?, conversation_id?}` (camelCase accepted too). Lines are validated before anything
 * is written; an invalid line is reported with its number and field.
 */
import { readFile } from 'node:fs/promises';
import type { NewMessage, Role, ToolCall } from '../../agent/types.js';
import { parseIsoTime } from '../../agent/iso-time.js';
import { InvalidArgumentError } from '../../errors.js';
import { readJsonlObjects } from '../../eval/datasets/jsonl-dataset.js';

const ROLES = new Set<Role>(['system', 'user', 'assistant', 'tool']);

export interface ImportedLine {
  conversationId?: string;
  message: NewMessage;
}

export function parseJsonlMessages(text: string): ImportedLine[] {
  const lines: ImportedLine[] = [];
  for (const { where, value: v } of readJsonlObjects(text)) {
    if (!ROLES.has(v.role as Role)) throw new InvalidArgumentError(`${where}.role`, 'must be one of system, user, assistant, tool');
    const content = v.content ?? '';
    if (typeof content !== 'string') throw new InvalidArgumentError(`${where}.content`, 'must be a string');
    const message: NewMessage = { role: v.role as Role, content };
    const toolCalls = v.tool_calls ?? v.toolCalls;
    if (toolCalls !== undefined && toolCalls !== null) message.toolCalls = toolCalls as ToolCall[];
    const toolCallId = v.tool_call_id ?? v.toolCallId;
    if (typeof toolCallId === 'string') message.toolCallId = toolCallId;
    if (typeof v.name === 'string') message.name = v.name;
    if (typeof v.id === 'string') message.id = v.id;
    const createdAt = v.created_at ?? v.createdAt;
    if (createdAt !== undefined) message.createdAt = parseIsoTime(createdAt, `${where}.created_at`);
    const conversationId = v.conversation_id ?? v.conversationId;
    lines.push({ message, ...(typeof conversationId === 'string' ? { conversationId } : {}) });
  }
  return lines;
}

/** Group lines by conversation; `fallback` names lines without one. */
export function groupByConversation(lines: readonly ImportedLine[], fallback: string | undefined): Map<string, NewMessage[]> {
  const groups = new Map<string, NewMessage[]>();
  lines.forEach((line, k) => {
    const id = line.conversationId ?? fallback;
    if (!id) throw new InvalidArgumentError('--conversation', `is required: message ${k + 1} names no conversation_id`);
    groups.set(id, [...(groups.get(id) ?? []), line.message]);
  });
  return groups;
}

export async function readJsonlFile(file: string): Promise<ImportedLine[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError('<file>', `cannot be read: ${(error as Error).message}`);
  }
  return parseJsonlMessages(text);
}
