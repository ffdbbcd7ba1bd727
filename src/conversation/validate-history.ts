/**
 * The check at the `compactHistory(history, conversationId)` boundary, pure: a history given by a caller
 * must look like one the store returns, so planning, labels and the commit never run on garbage.
 * Throws InvalidArgumentError naming `history[i].<field>`.
 *
 * Tool calls: a tool result must answer a call of the assistant message that opens its group (the
 * nearest earlier message that is not a tool result), as in the OpenAI chat contract; call ids may
 * repeat across turns. A call without a result is allowed anywhere: at the end it is pending, and an
 * abandoned one (followed by a user turn) is still a valid history. The planner never separates a
 * call from the results that follow it.
 */
import type { ConversationMessage, Role, ToolCall } from './types.js';
import { InvalidArgumentError } from '../errors.js';
import { requireConversationId } from './conversation-id.js';
import { describeValue, MAX_SESSION_ID_BYTES, requireKey, requireText } from './text.js';
import { repeatedCallId, type ToolGroupMember, UNANSWERED_TOOL_RESULT_RULE, walkToolGroups } from './tool-groups.js';

const ROLES: ReadonlySet<string> = new Set<Role>(['system', 'user', 'assistant', 'tool']);
/**
 * What `toISOString()` writes: UTC, milliseconds, so that times sort as text. This is not the boundary
 * rule for times a caller gives (`parseIsoTime` in iso-time.ts reads those and canonicalizes them); it is
 * the rule that a history holds times as the store writes them, so a history with any other spelling
 * did not come from a store and is refused instead of being sorted wrongly.
 */
const CANONICAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Fields = Record<string, unknown>;

/** Throws unless `history` is a well-formed history of `conversationId`. */
export function validateHistory(history: unknown, conversationId: unknown): asserts history is readonly ConversationMessage[] {
  requireConversationId(conversationId);
  if (!Array.isArray(history)) throw new InvalidArgumentError('history', `must be an array, got ${describeValue(history)}`);
  const ids = new Map<string, number>();
  const groups = walkToolGroups();
  let clipArchiveAt: number | undefined;
  let lastSeq = 0;
  history.forEach((value: unknown, i) => {
    const at = `history[${i}]`;
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new InvalidArgumentError(at, `must be an object, got ${describeValue(value)}`);
    const message = value as Fields;
    const id = requireText(message.id, `${at}.id`);
    const first = ids.get(id);
    if (first !== undefined) throw new InvalidArgumentError(`${at}.id`, `duplicates history[${first}].id (${JSON.stringify(id)})`);
    ids.set(id, i);
    if (message.conversationId !== conversationId) {
      throw new InvalidArgumentError(`${at}.conversationId`, `must be ${JSON.stringify(conversationId)}, the conversation being compacted`);
    }
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      throw new InvalidArgumentError(`${at}.role`, `must be one of system, user, assistant, tool; got ${describeValue(message.role)}`);
    }
    requireText(message.content, `${at}.content`, { allowEmpty: true });
    requireTime(message.createdAt, `${at}.createdAt`);
    if (message.name !== undefined) requireText(message.name, `${at}.name`);
    if (message.sessionId !== undefined) requireKey(message.sessionId, `${at}.sessionId`, MAX_SESSION_ID_BYTES);
    if (message.clearedOutputLabel !== undefined) {
      requireText(message.clearedOutputLabel, `${at}.clearedOutputLabel`);
      if (message.role !== 'tool') throw new InvalidArgumentError(`${at}.clearedOutputLabel`, 'is set by memfold on tool results only');
    }

    if (message.kind === 'clip_archive') {
      // The clip-archive (seq 0) sits after the system prompt in a history, outside the seq order.
      if (clipArchiveAt !== undefined) throw new InvalidArgumentError(`${at}.kind`, `a second clip-archive (the first is history[${clipArchiveAt}])`);
      if (message.role !== 'system') throw new InvalidArgumentError(`${at}.role`, "must be 'system' on the clip-archive");
      if (message.seq !== 0) throw new InvalidArgumentError(`${at}.seq`, `must be 0 on the clip-archive, got ${describeValue(message.seq)}`);
      clipArchiveAt = i;
    } else {
      if (message.kind !== undefined && message.kind !== 'message') {
        throw new InvalidArgumentError(`${at}.kind`, `must be 'message', 'clip_archive' or absent; got ${describeValue(message.kind)}`);
      }
      const seq = message.seq;
      if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq <= lastSeq) {
        throw new InvalidArgumentError(`${at}.seq`, `must be an integer greater than the previous message's seq (${lastSeq}), got ${describeValue(seq)}`);
      }
      lastSeq = seq;
    }

    checkToolCalls(message.toolCalls, `${at}.toolCalls`);
    // Role, kind and tool calls are checked above, so the message is a ToolGroupMember.
    const member = message as unknown as ToolGroupMember;
    if (message.role === 'tool') {
      const callId = requireText(message.toolCallId, `${at}.toolCallId`);
      if (groups.standing(member, callId) !== 'answers') {
        throw new InvalidArgumentError(`${at}.toolCallId`, `${JSON.stringify(callId)} ${UNANSWERED_TOOL_RESULT_RULE}`);
      }
    } else {
      if (message.toolCallId !== undefined) requireText(message.toolCallId, `${at}.toolCallId`);
      // A message other than a tool result closes the previous group and opens its own.
      groups.standing(member, undefined);
    }
  });
}

/** A message's tool calls are well-shaped, with ids unique within the message. */
function checkToolCalls(value: unknown, field: string): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new InvalidArgumentError(field, `must be an array, got ${describeValue(value)}`);
  value.forEach((item: unknown, k) => {
    const at = `${field}[${k}]`;
    if (typeof item !== 'object' || item === null) throw new InvalidArgumentError(at, `must be an object, got ${describeValue(item)}`);
    const call = item as Fields;
    requireText(call.id, `${at}.id`);
    if (call.type !== 'function') throw new InvalidArgumentError(`${at}.type`, `must be 'function', got ${describeValue(call.type)}`);
    const fn = call.function as Fields | null | undefined;
    if (typeof fn !== 'object' || fn === null) throw new InvalidArgumentError(`${at}.function`, `must be an object, got ${describeValue(fn)}`);
    requireText(fn.name, `${at}.function.name`);
    requireText(fn.arguments, `${at}.function.arguments`, { allowEmpty: true });
  });
  const calls = value as ToolCall[];
  const repeated = repeatedCallId(calls);
  if (repeated !== undefined) {
    const id = calls[repeated.index]!.id;
    throw new InvalidArgumentError(`${field}[${repeated.index}].id`, `duplicates ${field}[${repeated.first}].id (${JSON.stringify(id)})`);
  }
}

function requireTime(value: unknown, field: string): void {
  // The round trip refuses dates that match the pattern but do not exist (2024-02-30).
  const ms = typeof value === 'string' && CANONICAL_TIME.test(value) ? Date.parse(value) : Number.NaN;
  const valid = Number.isFinite(ms) && new Date(ms).toISOString() === value;
  if (!valid)
    throw new InvalidArgumentError(field, `must be an ISO 8601 UTC time as toISOString() writes it (2024-01-08T09:00:00.000Z), got ${describeValue(value)}`);
}
