/**
 * A message's digest: what the store records beside every id a conversation ever accepted, so a
 * re-run import can tell "this very message is already here" (skip it) from "this id was used for
 * another message" (refuse it). Pure.
 */
import { createHash } from 'node:crypto';
import type { Role, ToolCall } from './types.js';

/** The fields that make a message what it is. Its time is left out: a default time differs per run. */
export interface DigestFields {
  role: Role;
  content: string;
  toolCalls?: readonly ToolCall[];
  toolCallId?: string;
  name?: string;
  sessionId?: string;
}

/**
 * sha256 (hex) of the message's role, text, tool calls, tool call id and name, in a fixed order, and its session id
 * when it has one. The session id is appended only when present, so a message without one keeps the digest it had
 * before sessions existed (stored ledgers still match a re-imported file), while the same id re-sent under another
 * session is told apart as another message instead of being skipped with its session lost.
 */
export function messageDigest(message: DigestFields): string {
  const calls = (message.toolCalls ?? []).map((c) => [c.id, c.function.name, c.function.arguments]);
  const fields: unknown[] = [message.role, message.content, calls, message.toolCallId ?? null, message.name ?? null];
  if (message.sessionId !== undefined) fields.push(message.sessionId);
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}
