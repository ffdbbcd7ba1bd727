/** Builders for ConversationMessage lists in tests. */
import type { ConversationMessage, NewMessage, Role, ToolCall } from '../../src/conversation/types.js';

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

/** Alternating user/assistant turns with distinctive words (topic-N, numbers 1000+N and 2000+N), a minute apart. */
export function dialogue(turns: number, offset = 0): NewMessage[] {
  const out: NewMessage[] = [];
  for (let t = offset; t < offset + turns; t++) {
    const at = (k: number) => new Date(Date.UTC(2024, 2, 1, 8, 2 * t + k)).toISOString();
    out.push({ role: 'user', content: `Turn ${t}: tell me about topic-${t} and the number ${1000 + t}. ${'filler words here '.repeat(8)}`, createdAt: at(0) });
    out.push({ role: 'assistant', content: `About topic-${t}: it relates to item ${2000 + t}. ${'more filler text '.repeat(8)}`, createdAt: at(1) });
  }
  return out;
}

/**
 * An order-taking chat of `turns` user/assistant pairs from pair `from` on, two minutes a pair: each pair
 * names order ORD-{500 + t} (the suites that need a summarizer to work on real words, against the fake server).
 */
export function orderChat(turns: number, from = 0): NewMessage[] {
  return Array.from({ length: turns }, (_, i) => {
    const t = from + i;
    return [
      {
        role: 'user' as const,
        content: `Please remember order ORD-${500 + t} for customer Ada Lovelace. ${'context '.repeat(20)}`,
        createdAt: new Date(Date.UTC(2024, 5, 1, 10, 2 * t)).toISOString(),
      },
      {
        role: 'assistant' as const,
        content: `Noted ORD-${500 + t}. ${'confirmation '.repeat(20)}`,
        createdAt: new Date(Date.UTC(2024, 5, 1, 10, 2 * t + 1)).toISOString(),
      },
    ];
  }).flat();
}

/**
 * User/assistant pairs with fixed ids (`u{t}`, `a{t}`), a minute apart: two compactions of it choose the same labels,
 * which the label-collision tests rely on.
 */
export function tripChat(turns: number): NewMessage[] {
  const at = (minute: number) => new Date(Date.UTC(2024, 4, 2, 9, minute)).toISOString();
  return Array.from({ length: turns }, (_, t) => [
    {
      id: `u${t}`,
      role: 'user' as const,
      content: `Question ${t} about the trip: ${'which trains run to the coast on Sundays. '.repeat(4)}`,
      createdAt: at(2 * t),
    },
    { id: `a${t}`, role: 'assistant' as const, content: `Answer ${t}: ${'the 9:10 and the 13:40 run on Sundays. '.repeat(4)}`, createdAt: at(2 * t + 1) },
  ]).flat();
}
