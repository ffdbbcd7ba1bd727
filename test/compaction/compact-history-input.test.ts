/** compactHistory at its boundary: a malformed history is refused with the field named, never thrown, and nothing is written. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { persistenceBackends } from '../support/backends.js';
import { dialogue } from '../support/messages.js';
import { openStack, type Stack } from '../support/stack.js';

const [backend] = persistenceBackends();

describe('compactHistory refuses a malformed history', () => {
  let stack: Stack;
  let stored: ConversationMessage[];
  beforeAll(async () => {
    stack = await openStack(backend!, { compaction: { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 } });
    await stack.memfold.append('conv', dialogue(30));
    stored = await stack.memfold.history('conv');
  });
  afterAll(async () => stack?.close());

  const swapped = (h: ConversationMessage[]) => [h[1]!, h[0]!, ...h.slice(2)];
  const cases: Array<[string, () => unknown, string, string]> = [
    ['not an array', () => null, 'conv', 'history'],
    ['a string', () => 'hello', 'conv', 'history'],
    ['an empty conversation id', () => stored, '', 'conversationId'],
    ['a message of another conversation', () => stored, 'other', 'history[0].conversationId'],
    ['an unknown role', () => stored.map((m, i) => (i === 3 ? { ...m, role: 'wizard' } : m)), 'conv', 'history[3].role'],
    ['missing content', () => stored.map((m, i) => (i === 2 ? { ...m, content: undefined } : m)), 'conv', 'history[2].content'],
    ['a duplicate id', () => stored.map((m, i) => (i === 4 ? { ...m, id: stored[2]!.id } : m)), 'conv', 'history[4].id'],
    ['seq out of order', () => swapped(stored), 'conv', 'history[1].seq'],
    ['an invalid date', () => stored.map((m, i) => (i === 5 ? { ...m, createdAt: '2024-02-30T00:00:00.000Z' } : m)), 'conv', 'history[5].createdAt'],
    ['a lone surrogate', () => stored.map((m, i) => (i === 6 ? { ...m, content: 'bad \ud800 text' } : m)), 'conv', 'history[6].content'],
    [
      'a tool result without its call',
      () => [...stored, { ...stored.at(-1)!, id: 'late', seq: 999, role: 'tool', toolCallId: 'nowhere' }],
      'conv',
      'history[60].toolCallId',
    ],
  ];

  for (const [name, history, conversationId, field] of cases) {
    it(`${name}: failed with invalid_input naming ${field}, live rows untouched`, async () => {
      const result = await stack.memfold.compactor.compactHistory(history() as ConversationMessage[], conversationId, { force: true });
      expect(result).toMatchObject({ status: 'failed', failureCode: 'invalid_input' });
      expect(result.error).toContain(`Invalid argument ${field}:`);
      expect(await stack.memfold.history('conv')).toEqual(stored);
      expect(await stack.archive.list({ conversationId: 'conv' })).toEqual([]);
    });
  }
});
