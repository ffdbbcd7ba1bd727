/**
 * `context()` as the OpenAI APIs take it, pure: Chat Completions messages, or Responses API input items. memfold's
 * own notes (the clip-archive, the continuation note) are system messages; `memoryAs: 'user'` sends them as user
 * messages instead, for SDKs that discourage a system message after the first.
 */
import type OpenAI from 'openai';
import type { ConversationMessage } from '../conversation/types.js';

export interface OpenAIMessagesOptions {
  /** The role of the clip-archive and the continuation note. Default `system`. */
  memoryAs?: 'system' | 'user';
}

type ContextMessage = Pick<ConversationMessage, 'role' | 'content' | 'name' | 'toolCalls' | 'toolCallId' | 'kind'>;

/** A note memfold wrote rather than a message of the conversation. */
const isMemoryNote = (message: ContextMessage) => message.kind === 'clip_archive' || message.kind === 'continuation';

function roleOf(message: ContextMessage, options: OpenAIMessagesOptions): ConversationMessage['role'] {
  return isMemoryNote(message) && options.memoryAs === 'user' ? 'user' : message.role;
}

/** Chat Completions messages (`ChatCompletionMessageParam`), in order. */
export function toChatMessages(context: readonly ContextMessage[], options: OpenAIMessagesOptions = {}): OpenAI.Chat.ChatCompletionMessageParam[] {
  return context.map((message): OpenAI.Chat.ChatCompletionMessageParam => {
    const name = message.name !== undefined ? { name: message.name } : {};
    switch (roleOf(message, options)) {
      case 'system':
        return { role: 'system', content: message.content, ...name };
      case 'user':
        return { role: 'user', content: message.content, ...name };
      case 'tool':
        return { role: 'tool', content: message.content, tool_call_id: message.toolCallId ?? '' };
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        if (calls.length === 0) return { role: 'assistant', content: message.content, ...name };
        const tool_calls = calls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          function: { name: call.function.name, arguments: call.function.arguments },
        }));
        // A call-only turn has no text: the API takes `null` there.
        return { role: 'assistant', content: message.content === '' ? null : message.content, tool_calls, ...name };
      }
    }
  });
}

/** Responses API input items: messages, each tool call as a `function_call`, each result as a `function_call_output`. */
export function toResponsesInput(context: readonly ContextMessage[], options: OpenAIMessagesOptions = {}): OpenAI.Responses.ResponseInputItem[] {
  return context.flatMap((message): OpenAI.Responses.ResponseInputItem[] => {
    const role = roleOf(message, options);
    if (role === 'tool') return [{ type: 'function_call_output', call_id: message.toolCallId ?? '', output: message.content }];
    const text: OpenAI.Responses.ResponseInputItem[] =
      message.content === '' && (message.toolCalls ?? []).length > 0 ? [] : [{ type: 'message', role, content: message.content }];
    const calls = (message.toolCalls ?? []).map(
      (call): OpenAI.Responses.ResponseInputItem => ({ type: 'function_call', call_id: call.id, name: call.function.name, arguments: call.function.arguments }),
    );
    return [...text, ...calls];
  });
}
