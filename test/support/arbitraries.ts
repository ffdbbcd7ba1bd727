/**
 * Random conversations for the property, crash and concurrency tests (fast-check arbitraries):
 * user and assistant turns, tool calls with their results, short and long texts, any unicode
 * that a store accepts (well-formed, no U+0000).
 */
import fc from 'fast-check';
import type { NewMessage } from '../../src/conversation/types.js';

/** Text the stores accept: well-formed unicode without U+0000. */
const anyText = fc.string({ unit: 'grapheme', maxLength: 80 }).map((s) => s.replace(/\u0000/g, ''));
const words = fc.lorem({ maxCount: 40 });
/** Mostly short, sometimes several thousand characters (a pasted document, a large tool output). */
const text = fc.oneof(
  { weight: 4, arbitrary: words },
  { weight: 2, arbitrary: anyText },
  { weight: 1, arbitrary: fc.tuple(words, fc.integer({ min: 5, max: 60 })).map(([w, n]) => `${w} `.repeat(n).trim()) },
);

export interface TurnShape {
  user: string;
  /** Tool round trips before the answer. */
  tools: Array<{ name: string; args: string; result: string }>;
  answer: string;
}

export const turnShape: fc.Arbitrary<TurnShape> = fc.record({
  user: text,
  tools: fc.array(fc.record({ name: fc.constantFrom('lookup', 'search', 'get_order'), args: anyText.map((a) => JSON.stringify({ q: a })), result: text }), {
    maxLength: 2,
  }),
  answer: text,
});

/**
 * Messages for turns, a minute apart from `start` (without `start`, the store stamps them when they
 * arrive). Call ids are `${callPrefix}_${n}`: unique as long as the prefix is unique for the conversation.
 */
export function turnMessages(turns: readonly TurnShape[], callPrefix: string, start?: Date): NewMessage[] {
  const out: NewMessage[] = [];
  let minute = 0;
  let call = 0;
  const at = () => (start ? new Date(start.getTime() + 60_000 * minute++).toISOString() : undefined);
  for (const turn of turns) {
    out.push(stamped({ role: 'user', content: turn.user }, at()));
    for (const tool of turn.tools) {
      const id = `${callPrefix}_${call++}`;
      out.push(stamped({ role: 'assistant', content: '', toolCalls: [{ id, type: 'function', function: { name: tool.name, arguments: tool.args } }] }, at()));
      out.push(stamped({ role: 'tool', toolCallId: id, name: tool.name, content: tool.result }, at()));
    }
    out.push(stamped({ role: 'assistant', content: turn.answer }, at()));
  }
  return out;
}

function stamped(message: NewMessage, createdAt: string | undefined): NewMessage {
  return createdAt === undefined ? message : { ...message, createdAt };
}

/** `count` turns drawn deterministically from `seed` (for the child-process tests, which cannot shrink). */
export function sampleTurns(seed: number, count: number): TurnShape[] {
  return fc.sample(turnShape, { seed, numRuns: count });
}
