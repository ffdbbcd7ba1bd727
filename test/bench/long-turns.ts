/**
 * A long conversation of long turns for the benchmarks: LoCoMo's conversations one after another as a single
 * stream, every `join` turns joined into one message (`Speaker: text` lines), the messages alternating user and
 * assistant. Three LoCoMo turns make a message of about 114 tokens, so a user and assistant turn is about 230.
 */
import type { LocomoConversation } from '../../src/eval/datasets/locomo.js';
import type { NewMessage } from '../../src/conversation/types.js';

export const LONG_TURN_JOIN = 3;

export function longTurnStream(conversations: readonly LocomoConversation[], join: number): LocomoConversation {
  const turns = conversations.flatMap((c) => c.messages);
  const messages: NewMessage[] = [];
  for (let i = 0; i < turns.length; i += join) {
    const group = turns.slice(i, i + join);
    messages.push({
      role: messages.length % 2 === 0 ? 'user' : 'assistant',
      content: group.map((turn) => `${turn.name}: ${turn.content}`).join('\n'),
      createdAt: group[0]!.createdAt!,
    });
  }
  return { id: `locomo-joined-${join}`, messages, turnIds: [], turnLines: [], questions: [] };
}
