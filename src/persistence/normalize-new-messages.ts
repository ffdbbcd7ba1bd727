/**
 * Checks what callers hand to `append` before anything reaches a store, so bad input fails with an
 * InvalidArgumentError naming the field instead of a driver error (or silent garbage). Pure; every
 * PersistenceProvider adapter runs it. One zod schema (`newMessageSchema`) holds the per-field rules;
 * the rules across fields (a tool result's call id, the size cap) follow it.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Role, ToolCall } from '../conversation/types.js';
import { isoTimeSchema } from '../conversation/iso-time.js';
import { repeatedCallId } from '../conversation/tool-groups.js';
import { parseWithSchema } from '../conversation/schema-issues.js';
import { describeValue, MAX_KEY_BYTES, MAX_SESSION_ID_BYTES, storedTextProblem, storedTextSchema } from '../conversation/text.js';
import { utf8Bytes } from '../conversation/well-formed-text.js';
import { InvalidArgumentError } from '../errors.js';
import { valueOnDemand, zod } from '../zod-on-demand.js';

/** A message's content as every store keeps it (the `content` jsonb column of the Kysely store). */
export interface StoredContent {
  text: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  name?: string;
  /** The caller's session id (the jsonb column holds it, so it needed no migration). */
  sessionId?: string;
  /** Set by `commitClearing` only (never from `append`): the label holding the original text. */
  clearedOutputLabel?: string;
  /** On the clip-archive row only, set by `commitCompaction`: the highest seq the conversation held at the last commit that archived messages. */
  compactedThroughSeq?: number;
  /** On the clip-archive row only, set by `commitCompaction`: where the conversation's opening starts (`ConversationMessage.openingSeq`). */
  openingSeq?: number;
}

/** A message ready to insert: id filled in, content shaped for the jsonb column. */
export interface NormalizedMessage {
  id: string;
  role: Role;
  content: StoredContent;
  /** Absent when the caller gave none: `append` stamps it under the conversation's lock. */
  createdAt?: string;
  /** Set when the caller pinned the message (`NewMessage.pinned`): a column of its own, outside the digest. */
  pinned?: true;
}

export interface NormalizeOptions {
  /** UTF-8 bytes one message's text (content, tool calls, name, ids) may take. */
  maxMessageBytes: number;
}

const toolCallSchema = () => {
  const z = zod();
  return z.object({
    id: storedTextSchema(),
    type: z.literal('function', { error: (issue) => `must be 'function', got ${describeValue(issue.input)}` }),
    function: z.object({ name: storedTextSchema(), arguments: storedTextSchema({ allowEmpty: true }) }),
  });
};

/** The tool-group rule's `repeatedCallId`, named as `field[i].id`. */
function requireUniqueCallIds(calls: readonly ToolCall[], field: string): void {
  const repeated = repeatedCallId(calls);
  if (repeated !== undefined) {
    const id = calls[repeated.index]!.id;
    throw new InvalidArgumentError(`${field}[${repeated.index}].id`, `duplicates ${field}[${repeated.first}].id (${JSON.stringify(id)})`);
  }
}

/** Where a message in the openai SDK's shape is sent: `append` takes memfold's own shape only. */
const SDK_SHAPE = "the openai SDK's shape: fromChatMessage or fromResponsesOutput converts it";

/** The content: a string (empty allowed); the SDK's `null` or content parts are refused naming the converters. */
const contentSchema = () =>
  zod()
    .string({
      error: (issue) => (issue.input === null || Array.isArray(issue.input) ? `must be a string, got ${describeValue(issue.input)} (${SDK_SHAPE})` : undefined),
    })
    .check((ctx) => {
      const problem = storedTextProblem(ctx.value, { allowEmpty: true });
      if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
    });

/** A key of the SDK's spelling, refused: ignored like other unknown keys, it would store an assistant turn without its calls. */
const sdkKey = (ours: string) =>
  zod()
    .undefined({ error: () => `is the openai SDK's spelling; memfold takes ${ours} (${SDK_SHAPE})` })
    .optional();

/** One message as `append` takes it; keys it does not name (a caller's `seq`) are ignored, the SDK's snake_case ones refused. */
export const newMessageSchema = valueOnDemand(() => {
  const z = zod();
  return z.object({
    role: z.enum(['system', 'user', 'assistant', 'tool'], {
      error: (issue) => `must be one of system, user, assistant, tool; got ${describeValue(issue.input)}`,
    }),
    kind: z
      .literal('message', {
        error: (issue) => `must be 'message' or absent (the clip-archive is written by commitCompaction); got ${describeValue(issue.input)}`,
      })
      .optional(),
    content: contentSchema(),
    toolCalls: z.array(toolCallSchema()).optional(),
    tool_calls: sdkKey('toolCalls'),
    toolCallId: storedTextSchema().optional(),
    tool_call_id: sdkKey('toolCallId'),
    name: storedTextSchema().optional(),
    id: storedTextSchema({ maxKeyBytes: MAX_KEY_BYTES }).optional(),
    sessionId: storedTextSchema({ maxKeyBytes: MAX_SESSION_ID_BYTES }).optional(),
    pinned: z.boolean({ error: (issue) => `must be a boolean, got ${describeValue(issue.input)}` }).optional(),
    // A missing time stays missing: append stamps it under the conversation's row lock.
    createdAt: isoTimeSchema.optional(),
  });
});

/** `append`'s input: an array of messages. */
export const newMessagesSchema = valueOnDemand(() => zod().array(newMessageSchema));

/** Validate `append` input, each message on its own (pairing across messages is checked by the caller). */
export function normalizeNewMessages(messages: unknown, options: NormalizeOptions): NormalizedMessage[] {
  const parsed = parseWithSchema(newMessagesSchema, messages, { prefix: 'messages' });
  return parsed.map((message, index) => normalizeOne(message, `messages[${index}]`, options));
}

/** The rules across one message's fields, then its stored shape. */
function normalizeOne(message: z.output<typeof newMessageSchema>, field: string, options: NormalizeOptions): NormalizedMessage {
  const content: StoredContent = { text: message.content };
  if (message.toolCalls !== undefined) {
    requireUniqueCallIds(message.toolCalls, `${field}.toolCalls`);
    content.toolCalls = message.toolCalls;
  }
  if (message.toolCallId !== undefined) content.toolCallId = message.toolCallId;
  if (message.name !== undefined) content.name = message.name;
  if (message.sessionId !== undefined) content.sessionId = message.sessionId;
  if (message.role === 'tool' && content.toolCallId === undefined) {
    throw new InvalidArgumentError(`${field}.toolCallId`, 'is required on a tool message: the id of the assistant tool call it answers');
  }
  const id = message.id ?? randomUUID();
  requireSize(content, id, field, options.maxMessageBytes);
  return {
    id,
    role: message.role,
    content,
    ...(message.createdAt === undefined ? {} : { createdAt: message.createdAt }),
    ...(message.pinned === true ? { pinned: true as const } : {}),
  };
}

/** Caps one message's UTF-8 bytes, so a runaway tool output cannot fill the table or the context. */
function requireSize(content: StoredContent, id: string, field: string, maxBytes: number): void {
  const contentBytes = utf8Bytes(content.text);
  if (contentBytes > maxBytes) {
    throw new InvalidArgumentError(`${field}.content`, `is ${contentBytes} bytes of UTF-8, over the maximum of ${maxBytes} (maxMessageBytes)`);
  }
  const parts = [
    id,
    content.toolCallId ?? '',
    content.name ?? '',
    content.sessionId ?? '',
    ...(content.toolCalls ?? []).flatMap((c) => [c.id, c.function.name, c.function.arguments]),
  ];
  const total = parts.reduce((sum, part) => sum + utf8Bytes(part), contentBytes);
  if (total > maxBytes) {
    throw new InvalidArgumentError(field, `is ${total} bytes of UTF-8 (content, tool calls, name and ids), over the maximum of ${maxBytes} (maxMessageBytes)`);
  }
}
