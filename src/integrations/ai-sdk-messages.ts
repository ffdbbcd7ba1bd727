/**
 * memfold's messages and the AI SDK's, both ways, pure: the mirror of `openai/openai-messages.ts` and
 * `openai-replies.ts` for `ai`. `toModelMessages(context)` gives the prompt a model call takes (`ModelMessage`s, in
 * the shape of `LanguageModelV4Prompt`, so one list serves `generateText({ messages })` and a middleware's
 * `params.prompt`); `fromModelMessages` and `fromModelContent` read a prompt or a model's answer back as what `append`
 * takes. memfold keeps text and function calls: reasoning and sources are left out (not turns of the conversation),
 * anything else (files, provider-run tools, approvals) is refused naming the field, never dropped without a word.
 */
import type { ModelMessage } from 'ai';
import type { ConversationMessage, NewMessage, ToolCall } from '../conversation/types.js';
import { InvalidArgumentError } from '../errors.js';
import type { PromptMessage, ResultContent } from './ai-sdk-types.js';

type ContextMessage = Pick<ConversationMessage, 'role' | 'content' | 'toolCalls' | 'toolCallId' | 'kind'>;

export interface ModelMessagesOptions {
  /** The role of memfold's notes (the clip-archive, the continuation note). Default `user`: see the README. */
  memoryAs?: 'system' | 'user';
}

/** A call's arguments as the SDK's `input`: the parsed JSON, or the text as it came when it is not JSON. */
function inputOf(call: ToolCall): unknown {
  try {
    return JSON.parse(call.function.arguments);
  } catch {
    return call.function.arguments;
  }
}

function assistantMessage(message: ContextMessage): PromptMessage {
  const calls = (message.toolCalls ?? []).map((call) => ({
    type: 'tool-call' as const,
    toolCallId: call.id,
    toolName: call.function.name,
    input: inputOf(call),
  }));
  const text = message.content === '' && calls.length > 0 ? [] : [{ type: 'text' as const, text: message.content }];
  return { role: 'assistant', content: [...text, ...calls] };
}

/** `context()` as the AI SDK's prompt messages, in order; a tool result names its call's tool, as the SDK requires. */
export function toModelMessages(context: readonly ContextMessage[], options: ModelMessagesOptions = {}): PromptMessage[] & ModelMessage[] {
  const toolNames = new Map<string, string>();
  return context.map((message): PromptMessage & ModelMessage => {
    const note = message.kind === 'clip_archive' || message.kind === 'continuation';
    const role = note ? (options.memoryAs ?? 'user') : message.role;
    switch (role) {
      case 'system':
        return { role: 'system', content: message.content };
      case 'user':
        return { role: 'user', content: [{ type: 'text', text: message.content }] };
      case 'tool': {
        const toolCallId = message.toolCallId ?? '';
        const output = { type: 'text' as const, value: message.content };
        return { role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName: toolNames.get(toolCallId) ?? '', output }] };
      }
      case 'assistant':
        for (const call of message.toolCalls ?? []) toolNames.set(call.id, call.function.name);
        return assistantMessage(message) as PromptMessage & ModelMessage;
    }
  }) as PromptMessage[] & ModelMessage[];
}

type AnyPart = { type: string; [key: string]: unknown };
type AnyMessage = PromptMessage | ModelMessage;

const refused = (field: string, type: unknown, stored: string) =>
  new InvalidArgumentError(`${field}.type`, `is ${JSON.stringify(type)}: memfold stores ${stored}`);

/** A tool result's output as the text memfold stores: text as it is, JSON written out, a denial or error said. */
function outputText(output: unknown, field: string): string {
  const value = output as { type?: string; value?: unknown; reason?: string };
  switch (value?.type) {
    case 'text':
    case 'error-text':
      return String(value.value ?? '');
    case 'json':
    case 'error-json':
      return JSON.stringify(value.value ?? null);
    case 'execution-denied':
      return `Execution denied${value.reason ? `: ${value.reason}` : ''}`;
    case 'content':
      return (value.value as AnyPart[])
        .map((part, index) => {
          if (part.type === 'text') return String(part.text);
          throw refused(`${field}.value[${index}]`, part.type, 'text tool output');
        })
        .join('');
    default:
      throw refused(field, value?.type, 'text, json, error and execution-denied tool output');
  }
}

function callOf(part: AnyPart, field: string): ToolCall {
  if (part.providerExecuted === true) throw new InvalidArgumentError(`${field}.providerExecuted`, 'is true: memfold stores the calls the app runs');
  const input = part.input;
  const args = typeof input === 'string' ? input : JSON.stringify(input ?? {});
  return { id: String(part.toolCallId), type: 'function', function: { name: String(part.toolName), arguments: args } };
}

/** An assistant turn from its parts: text joined, function calls kept, reasoning and sources left out. */
function assistantOf(parts: readonly AnyPart[], field: string): NewMessage {
  let content = '';
  const toolCalls: ToolCall[] = [];
  parts.forEach((part, index) => {
    if (part.type === 'text') content += String(part.text);
    else if (part.type === 'tool-call') toolCalls.push(callOf(part, `${field}[${index}]`));
    else if (part.type !== 'reasoning' && part.type !== 'reasoning-file' && part.type !== 'source') {
      throw refused(`${field}[${index}]`, part.type, 'text and tool-call parts (reasoning is left out)');
    }
  });
  return { role: 'assistant', content, ...(toolCalls.length > 0 ? { toolCalls } : {}) };
}

function messageOf(message: AnyMessage, field: string): NewMessage[] {
  const parts = (typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content) as AnyPart[];
  switch (message.role) {
    case 'system':
      return [{ role: 'system', content: String(message.content) }];
    case 'user': {
      const texts = parts.map((part, index) => {
        if (part.type === 'text') return String(part.text);
        throw refused(`${field}.content[${index}]`, part.type, 'text user messages');
      });
      return [{ role: 'user', content: texts.join('') }];
    }
    case 'assistant':
      return [assistantOf(parts, `${field}.content`)];
    case 'tool':
      return parts.map((part, index) => {
        if (part.type !== 'tool-result') throw refused(`${field}.content[${index}]`, part.type, 'tool-result parts');
        return { role: 'tool', toolCallId: String(part.toolCallId), content: outputText(part.output, `${field}.content[${index}].output`) };
      });
    default:
      throw new InvalidArgumentError(`${field}.role`, `is ${JSON.stringify((message as { role: unknown }).role)}`);
  }
}

/** A prompt (`ModelMessage`s or `LanguageModelV4Prompt`) as memfold's messages; each tool result its own message. */
export function fromModelMessages(messages: readonly AnyMessage[]): NewMessage[] {
  if (!Array.isArray(messages)) throw new InvalidArgumentError('messages', 'must be an array of messages');
  return messages.flatMap((message, index) => messageOf(message, `messages[${index}]`));
}

/** What a model answered (`LanguageModelV4Content[]`, `generateText`'s `content`) as one assistant message. */
export function fromModelContent(content: readonly ResultContent[]): NewMessage {
  return assistantOf(content as unknown as AnyPart[], 'content');
}
