/**
 * What the `openai` SDK hands back, as messages `append` takes, pure: the inverse of `openai-messages.ts`.
 * `fromChatMessage` takes a Chat Completions message (the reply `choices[0].message`, `content: null` and `tool_calls`
 * included, or any request message); `fromResponsesOutput` takes Responses items (a response's `output`, or input
 * items). Both return an array, so a reply is stored in one line: `append(id, fromChatMessage(reply))`.
 *
 * memfold keeps text and function calls. A refusal is kept as what the assistant said (its text becomes the content);
 * Responses `reasoning` items are left out (hidden reasoning, not a turn of the conversation); anything else memfold
 * cannot store (images, audio input, custom tool calls, provider-run tools) is refused, naming the field, rather than
 * dropped without a word.
 */
import type OpenAI from 'openai';
import type { NewMessage, Role, ToolCall } from '../conversation/types.js';
import { InvalidArgumentError } from '../errors.js';

/** A Chat Completions message: the reply's `ChatCompletionMessage`, or a request's `ChatCompletionMessageParam`. */
export type ChatMessageLike = OpenAI.Chat.ChatCompletionMessage | OpenAI.Chat.ChatCompletionMessageParam;

/** A Responses item: of a response's `output` (`ResponseOutputItem`), or of a request's `input` (`ResponseInputItem`). */
export type ResponsesItemLike = OpenAI.Responses.ResponseOutputItem | OpenAI.Responses.ResponseInputItem;

/** A content part of either API, as far as memfold reads it. */
interface ContentPart {
  type: string;
  text?: string;
  refusal?: string;
}

const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);

/** A content given as a string or as parts: the text parts joined (as the SDK's `output_text` joins them), a refusal's text as said. */
function textOf(content: string | readonly ContentPart[] | null | undefined, field: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new InvalidArgumentError(field, 'must be a string, null or an array of content parts');
  return content
    .map((part, index) => {
      if (TEXT_PARTS.has(part?.type) && typeof part.text === 'string') return part.text;
      if (part?.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
      throw new InvalidArgumentError(
        `${field}[${index}].type`,
        `is ${JSON.stringify(part?.type)}: memfold stores text (text, input_text, output_text and refusal parts)`,
      );
    })
    .join('');
}

function functionCall(call: OpenAI.Chat.ChatCompletionMessageToolCall, field: string): ToolCall {
  if (call.type !== 'function') {
    throw new InvalidArgumentError(`${field}.type`, `is ${JSON.stringify(call.type)}: memfold stores function tool calls only`);
  }
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } };
}

type AssistantMessage = OpenAI.Chat.ChatCompletionMessage | OpenAI.Chat.ChatCompletionAssistantMessageParam;

/** The assistant's turn: its text (else its refusal, else its audio's transcript) and its function calls. */
function assistantMessage(message: AssistantMessage): NewMessage {
  if (message.function_call) {
    throw new InvalidArgumentError('message.function_call', 'is the deprecated function call (no call id): memfold stores tool_calls');
  }
  const audio = message.audio as { transcript?: unknown } | null | undefined;
  const transcript = typeof audio?.transcript === 'string' ? audio.transcript : '';
  const content = textOf(message.content, 'message.content') || (message.refusal ?? '') || transcript;
  const toolCalls = (message.tool_calls ?? []).map((call, index) => functionCall(call, `message.tool_calls[${index}]`));
  const name = 'name' in message && message.name !== undefined ? { name: message.name } : {};
  return { role: 'assistant', content, ...(toolCalls.length > 0 ? { toolCalls } : {}), ...name };
}

/**
 * One Chat Completions message as memfold's (an array of one, for `append`). `content: null` reads as empty text;
 * `developer` is stored as `system`; a custom tool call or a deprecated `function` message is refused.
 */
export function fromChatMessage(message: ChatMessageLike): NewMessage[] {
  if (message === null || typeof message !== 'object') throw new InvalidArgumentError('message', 'must be a Chat Completions message object');
  switch (message.role) {
    case 'assistant':
      return [assistantMessage(message)];
    case 'tool':
      return [{ role: 'tool', content: textOf(message.content, 'message.content'), toolCallId: message.tool_call_id }];
    case 'system':
    case 'developer':
    case 'user': {
      const name = message.name !== undefined ? { name: message.name } : {};
      const role: Role = message.role === 'user' ? 'user' : 'system';
      return [{ role, content: textOf(message.content, 'message.content'), ...name }];
    }
    default:
      throw new InvalidArgumentError(
        'message.role',
        `is ${JSON.stringify((message as { role: unknown }).role)}: memfold stores system, developer, user, assistant and tool messages`,
      );
  }
}

type MessageItem = Extract<ResponsesItemLike, { role: string; content: unknown }>;

function messageOf(item: MessageItem, field: string): NewMessage {
  const role: Role = item.role === 'developer' ? 'system' : item.role;
  return { role, content: textOf(item.content as string | readonly ContentPart[], `${field}.content`) };
}

/** Adds a function call to the assistant message right before it, or starts an assistant message of calls only. */
function addCall(messages: NewMessage[], call: OpenAI.Responses.ResponseFunctionToolCall): void {
  const toolCall: ToolCall = { id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } };
  const last = messages.at(-1);
  if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), toolCall];
  else messages.push({ role: 'assistant', content: '', toolCalls: [toolCall] });
}

/**
 * Responses items as memfold's messages, in order: a `message` as a message of its role (`developer` as `system`);
 * `function_call` items joined to the assistant message before them (else one of calls only); a `function_call_output`
 * as a tool message. `reasoning` items are left out; any other item is refused naming `output[i].type`.
 */
export function fromResponsesOutput(output: readonly ResponsesItemLike[]): NewMessage[] {
  if (!Array.isArray(output)) throw new InvalidArgumentError('output', 'must be an array of Responses items');
  const messages: NewMessage[] = [];
  output.forEach((item, index) => {
    const field = `output[${index}]`;
    if (item === null || typeof item !== 'object') throw new InvalidArgumentError(field, 'must be a Responses item object');
    // An easy input message (`{ role, content }`) may leave `type` out.
    if (item.type === undefined || item.type === 'message') {
      messages.push(messageOf(item as MessageItem, field));
    } else if (item.type === 'function_call') {
      addCall(messages, item);
    } else if (item.type === 'function_call_output') {
      if (typeof item.call_id !== 'string' || item.call_id === '') {
        throw new InvalidArgumentError(`${field}.call_id`, 'is required: the id of the function call this output answers');
      }
      messages.push({ role: 'tool', content: textOf(item.output as string | readonly ContentPart[], `${field}.output`), toolCallId: item.call_id });
    } else if (item.type !== 'reasoning') {
      throw new InvalidArgumentError(
        `${field}.type`,
        `is ${JSON.stringify(item.type)}: memfold stores message, function_call and function_call_output items (reasoning is left out)`,
      );
    }
  });
  return messages;
}
