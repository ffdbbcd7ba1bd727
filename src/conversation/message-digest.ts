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
}

/** sha256 (hex) of the message's role, text, tool calls, tool call id and name, in a fixed order. */
export function messageDigest(message: DigestFields): string {
  const calls = (message.toolCalls ?? []).map((c) => [c.id, c.function.name, c.function.arguments]);
  const canonical = JSON.stringify([message.role, message.content, calls, message.toolCallId ?? null, message.name ?? null]);
  return createHash('sha256').update(canonical).digest('hex');
}
