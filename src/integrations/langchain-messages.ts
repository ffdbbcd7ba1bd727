/**
 * memfold's messages and LangChain's, both ways: `toLangChainMessages(context)` gives the agent's state messages
 * (memfold's ids kept, memfold's notes marked so they are never stored back), `fromLangChainMessages` reads state
 * messages as what `append` takes. Text and tool calls are kept; other content blocks (images, files) are refused
 * naming the field, never dropped without a word.
 */
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import type { ConversationMessage, NewMessage, ToolCall } from '../conversation/types.js';
import { InvalidArgumentError } from '../errors.js';

type ContextMessage = Pick<ConversationMessage, 'id' | 'role' | 'content' | 'toolCalls' | 'toolCallId' | 'kind'>;

/** The `additional_kwargs` key that marks a note memfold wrote (the clip-archive, the continuation note). */
export const MEMFOLD_NOTE = 'memfold_note';

export interface LangChainMessagesOptions {
  /** The message class of memfold's notes. Default `user` (a HumanMessage, as LangChain's own summary is). */
  memoryAs?: 'system' | 'user';
}

function argsOf(call: ToolCall): Record<string, unknown> {
  try {
    const args: unknown = JSON.parse(call.function.arguments);
    return args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : { input: args };
  } catch {
    return { input: call.function.arguments };
  }
}

/** `context()` as LangChain messages, in order, each with its memfold id. */
export function toLangChainMessages(context: readonly ContextMessage[], options: LangChainMessagesOptions = {}): BaseMessage[] {
  // A tool message names its tool, as the agent's tool node writes it (some providers require the name).
  const toolNames = new Map<string, string>();
  return context.map((message): BaseMessage => {
    const id = message.id;
    if (message.kind === 'clip_archive' || message.kind === 'continuation') {
      const fields = { content: message.content, id, additional_kwargs: { [MEMFOLD_NOTE]: message.kind } };
      return options.memoryAs === 'system' ? new SystemMessage(fields) : new HumanMessage(fields);
    }
    switch (message.role) {
      case 'system':
        return new SystemMessage({ content: message.content, id });
      case 'user':
        return new HumanMessage({ content: message.content, id });
      case 'tool': {
        const name = toolNames.get(message.toolCallId ?? '');
        return new ToolMessage({ content: message.content, id, tool_call_id: message.toolCallId ?? '', ...(name ? { name } : {}) });
      }
      case 'assistant': {
        for (const call of message.toolCalls ?? []) toolNames.set(call.id, call.function.name);
        const tool_calls = (message.toolCalls ?? []).map((call) => ({ id: call.id, name: call.function.name, args: argsOf(call), type: 'tool_call' as const }));
        return new AIMessage({ content: message.content, id, ...(tool_calls.length > 0 ? { tool_calls } : {}) });
      }
    }
  });
}

/** A content as text: a string as it is, text blocks joined; any other block refused naming it. */
function textOf(content: BaseMessage['content'], field: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((block, index) => {
      if (block.type === 'text' && typeof block.text === 'string') return block.text;
      throw new InvalidArgumentError(`${field}[${index}].type`, `is ${JSON.stringify(block.type)}: memfold stores text content`);
    })
    .join('');
}

/** Whether a state message is a note memfold wrote: it is never stored back. */
export const isMemfoldNote = (message: BaseMessage) => message.additional_kwargs?.[MEMFOLD_NOTE] !== undefined;

/**
 * State messages as memfold's: human, AI (with its `tool_calls`) and tool messages. System messages and memfold's
 * own notes are left out (the agent's system prompt is its own, sent each call); any other type is refused.
 */
export function fromLangChainMessages(messages: readonly BaseMessage[]): NewMessage[] {
  return messages.flatMap((message, index): NewMessage[] => {
    const field = `messages[${index}]`;
    if (isMemfoldNote(message) || SystemMessage.isInstance(message)) return [];
    if (HumanMessage.isInstance(message)) return [{ role: 'user', content: textOf(message.content, `${field}.content`) }];
    if (ToolMessage.isInstance(message)) return [{ role: 'tool', content: textOf(message.content, `${field}.content`), toolCallId: message.tool_call_id }];
    if (AIMessage.isInstance(message)) {
      // An AI message's content may hold tool-use blocks beside its text (Anthropic): its calls are in `tool_calls`.
      const content = typeof message.content === 'string' ? message.content : message.text;
      const toolCalls: ToolCall[] = (message.tool_calls ?? []).map((call, callIndex) => ({
        id: call.id ?? `${message.id ?? 'call'}-${callIndex}`,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
      }));
      return [{ role: 'assistant', content, ...(toolCalls.length > 0 ? { toolCalls } : {}) }];
    }
    throw new InvalidArgumentError(`${field}`, `is a ${message.getType()} message: memfold stores human, ai, tool and system messages`);
  });
}
