/** Builders for ConversationMessage lists in tests. */
import type { ConversationMessage, Role, ToolCall } from '../../src/agent/types.js';

let counter = 0;

export function msg(role: Role, content: string, extra: Partial<ConversationMessage> = {}): ConversationMessage {
  counter++;
  return {
    id: `m${counter}`,
    conversationId: 'c1',
    seq: counter,
    role,
    content,
    createdAt: new Date(Date.UTC(2024, 0, 1, 0, counter)).toISOString(),
    kind: 'message',
    ...extra,
  };
}

export function toolCall(id: string, name = 'lookup', args = '{}'): ToolCall {
  return { id, type: 'function', function: { name, arguments: args } };
}

/** A user turn, an assistant tool call, its result, and an assistant answer. */
export function toolTurn(n: number, words = 20): ConversationMessage[] {
  const text = (label: string) => `${label} ${n} ` + 'lorem ipsum dolor '.repeat(Math.ceil(words / 3)).trim();
  return [
    msg('user', text('question')),
    msg('assistant', '', { toolCalls: [toolCall(`call_${n}`)] }),
    msg('tool', text('result'), { toolCallId: `call_${n}` }),
    msg('assistant', text('answer')),
  ];
}

/** Tokens as chars/4, for pure tests that need a predictable count. */
export function chars4(m: Pick<ConversationMessage, 'content' | 'toolCalls'>): number {
  return Math.ceil((m.content.length + JSON.stringify(m.toolCalls ?? []).length) / 4) + 4;
}
