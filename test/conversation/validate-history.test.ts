import { describe, expect, it } from 'vitest';
import type { ConversationMessage, ToolCall } from '../../src/conversation/types.js';
import { validateHistory } from '../../src/conversation/validate-history.js';
import { InvalidArgumentError } from '../../src/errors.js';

const C = 'conv-1';
const call = (id: string): ToolCall => ({ id, type: 'function', function: { name: 'lookup', arguments: '{}' } });
const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();

/** A history as the store returns it, in context order: system prompt, clip-archive, then the rest. */
function history(): ConversationMessage[] {
  return [
    { id: 'sys', conversationId: C, seq: 1, role: 'system', content: 'You are helpful.', createdAt: at(1), kind: 'message' },
    { id: `clip-archive-${C}`, conversationId: C, seq: 0, role: 'system', content: '[Context Summary]', createdAt: at(9), kind: 'clip_archive' },
    { id: 'u1', conversationId: C, seq: 4, role: 'user', content: 'weather? 👩‍💻', createdAt: at(4) },
    { id: 'a1', conversationId: C, seq: 5, role: 'assistant', content: '', toolCalls: [call('c1'), call('c2')], createdAt: at(5), kind: 'message' },
    { id: 't1', conversationId: C, seq: 6, role: 'tool', content: 'sunny', toolCallId: 'c1', name: 'lookup', createdAt: at(6), kind: 'message' },
    { id: 't2', conversationId: C, seq: 7, role: 'tool', content: 'warm', toolCallId: 'c2', createdAt: at(7), kind: 'message' },
    { id: 'a2', conversationId: C, seq: 8, role: 'assistant', content: 'Sunny and warm.', createdAt: at(8), kind: 'message' },
  ];
}

/** A valid history with one change. */
function edited(index: number, change: Record<string, unknown>): unknown[] {
  const messages: unknown[] = history();
  messages[index] = { ...(messages[index] as object), ...change };
  return messages;
}

function expectRefused(input: unknown, field: string, conversationId: unknown = C): void {
  let thrown: unknown;
  try {
    validateHistory(input, conversationId);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidArgumentError);
  expect(thrown).toMatchObject({ code: 'invalid_argument', field, message: expect.stringContaining(`Invalid argument ${field}:`) });
}

describe('validateHistory', () => {
  it('accepts a history as the store returns it, and an empty one', () => {
    expect(() => validateHistory(history(), C)).not.toThrow();
    expect(() => validateHistory([], C)).not.toThrow();
  });

  it('accepts a pending tool call at the end, and an abandoned one followed by a user turn', () => {
    const pending = [...history(), { id: 'a3', conversationId: C, seq: 9, role: 'assistant', content: '', toolCalls: [call('c3')], createdAt: at(10) }];
    expect(() => validateHistory(pending, C)).not.toThrow();
    const abandoned = [...pending, { id: 'u2', conversationId: C, seq: 10, role: 'user', content: 'never mind', createdAt: at(11) }];
    expect(() => validateHistory(abandoned, C)).not.toThrow();
  });

  it('accepts call ids reused across turns (each result answers its own group)', () => {
    const reused = [
      ...history(),
      { id: 'a3', conversationId: C, seq: 9, role: 'assistant', content: '', toolCalls: [call('c1')], createdAt: at(10) },
      { id: 't3', conversationId: C, seq: 10, role: 'tool', content: 'again', toolCallId: 'c1', createdAt: at(11) },
    ];
    expect(() => validateHistory(reused, C)).not.toThrow();
  });

  it.each<[string, () => unknown, string]>([
    ['not an array', () => ({ 0: history()[0] }), 'history'],
    ['a message that is not an object', () => [...history(), 'hello'], 'history[7]'],
    ['an unknown role', () => edited(2, { role: 'robot' }), 'history[2].role'],
    ['missing content', () => edited(2, { content: undefined }), 'history[2].content'],
    ['non-string content', () => edited(6, { content: { text: 'x' } }), 'history[6].content'],
    ['NUL in content', () => edited(2, { content: 'a\u0000b' }), 'history[2].content'],
    ['a lone surrogate in content', () => edited(2, { content: 'half \uD83D' }), 'history[2].content'],
    ['a lone surrogate in a name', () => edited(4, { name: '\uDC00' }), 'history[4].name'],
    ['an empty session id', () => edited(2, { sessionId: '' }), 'history[2].sessionId'],
    ['a session id over 256 bytes', () => edited(3, { sessionId: 's'.repeat(257) }), 'history[3].sessionId'],
    ['a session id that is not a string', () => edited(3, { sessionId: 3 }), 'history[3].sessionId'],
    ['an empty id', () => edited(2, { id: '' }), 'history[2].id'],
    ['a duplicate id', () => edited(6, { id: 'u1' }), 'history[6].id'],
    ['a message of another conversation', () => edited(3, { conversationId: 'conv-2' }), 'history[3].conversationId'],
    ['a seq that goes backwards', () => edited(5, { seq: 5 }), 'history[5].seq'],
    ['a repeated seq', () => edited(6, { seq: 7 }), 'history[6].seq'],
    ['a fractional seq', () => edited(2, { seq: 4.5 }), 'history[2].seq'],
    ['a seq given as a string', () => edited(2, { seq: '4' }), 'history[2].seq'],
    ['a non-ISO createdAt', () => edited(2, { createdAt: 'yesterday' }), 'history[2].createdAt'],
    ['a createdAt that does not exist', () => edited(2, { createdAt: '2023-02-29T00:00:00.000Z' }), 'history[2].createdAt'],
    ['a createdAt that is not UTC toISOString form', () => edited(2, { createdAt: '2024-01-01T00:04:00Z' }), 'history[2].createdAt'],
    ['a Date object as createdAt', () => edited(2, { createdAt: new Date() }), 'history[2].createdAt'],
    ['an unknown kind', () => edited(2, { kind: 'note' }), 'history[2].kind'],
    ['a clip-archive not at seq 0', () => edited(1, { seq: 3 }), 'history[1].seq'],
    ['a second clip-archive', () => edited(6, { kind: 'clip_archive', seq: 0, role: 'system' }), 'history[6].kind'],
    ['a tool result without toolCallId', () => edited(4, { toolCallId: undefined }), 'history[4].toolCallId'],
    ['a tool result whose call is not earlier', () => edited(5, { toolCallId: 'c9' }), 'history[5].toolCallId'],
    ['a tool result before its call', () => [history()[0], history()[4], history()[3]], 'history[1].toolCallId'],
    [
      'a tool result after a later assistant message',
      () => [...history(), { id: 't9', conversationId: C, seq: 9, role: 'tool', content: 'late', toolCallId: 'c1', createdAt: at(10) }],
      'history[7].toolCallId',
    ],
    ['a tool result answering a call of a user message', () => [{ ...history()[2]!, toolCalls: [call('c1')] }, { ...history()[4]! }], 'history[1].toolCallId'],
    ['duplicate tool call ids in one message', () => edited(3, { toolCalls: [call('c1'), call('c1')] }), 'history[3].toolCalls[1].id'],
    ['a tool call without function', () => edited(3, { toolCalls: [{ id: 'c1', type: 'function' }] }), 'history[3].toolCalls[0].function'],
    ['toolCalls that is not an array', () => edited(3, { toolCalls: call('c1') }), 'history[3].toolCalls'],
  ])('refuses %s, naming the field', (_case, build, field) => {
    expectRefused(build(), field);
  });

  it.each([
    ['an empty conversation id', ''],
    ['a conversation id with NUL', 'a\u0000'],
    ['a conversation id with a lone surrogate', 'a\uD800'],
    ['a non-string conversation id', 42],
  ])('refuses %s', (_case, conversationId) => {
    expectRefused([], 'conversationId', conversationId);
  });

  it('accepts hostile but well-formed conversation ids when every message carries the same one', () => {
    for (const id of ["a'; drop table messages; --", '%_\\', 'x'.repeat(1000), 'café', 'cafe\u0301']) {
      const messages = history().map((m) => ({ ...m, conversationId: id }));
      expect(() => validateHistory(messages, id)).not.toThrow();
    }
    // NFC and NFD spellings are different ids.
    expectRefused(
      history().map((m) => ({ ...m, conversationId: 'café' })),
      'history[0].conversationId',
      'cafe\u0301',
    );
  });
});
