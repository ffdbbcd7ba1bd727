/**
 * Bad input at `append`: each case is refused with an InvalidArgumentError naming the field, and the
 * conversation is exactly as it was before (nothing of the batch stored). Runs on every backend.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage, ToolCall } from '../../src/conversation/types.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/persistence/message-size-limit.js';
import { InvalidArgumentError, InvalidConfigError } from '../../src/errors.js';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';
import { openConfiguredStore } from './fixtures/open-configured-store.js';

const call = (id: string, args = '{}'): ToolCall => ({ id, type: 'function', function: { name: 'lookup', arguments: args } });
const newConversation = () => `conv-${randomUUID()}`;

/** Each case builds its batch from the conversation id (some bad inputs depend on it). */
const REFUSED: Array<[string, (conversationId: string) => unknown[], string]> = [
  ['missing content', () => [{ role: 'user' }], 'messages[0].content'],
  [
    'null content',
    () => [
      { role: 'user', content: 'ok' },
      { role: 'assistant', content: null },
    ],
    'messages[1].content',
  ],
  ['content parts (the openai SDK shape)', () => [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], 'messages[0].content'],
  [
    "the openai SDK's tool_calls (an object schema would drop them)",
    () => [{ role: 'assistant', content: 'Looking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }],
    'messages[0].tool_calls',
  ],
  ["the openai SDK's tool_call_id", () => [{ role: 'tool', content: '1', tool_call_id: 'c1', toolCallId: 'c1' }], 'messages[0].tool_call_id'],
  ['a lone high surrogate in content', () => [{ role: 'user', content: 'half an emoji: \uD83D' }], 'messages[0].content'],
  ['a surrogate pair in the wrong order', () => [{ role: 'user', content: '\uDE00\uD83D' }], 'messages[0].content'],
  ['a lone low surrogate in name', () => [{ role: 'user', content: 'hi', name: 'bob\uDC00' }], 'messages[0].name'],
  ['a lone surrogate in a message id', () => [{ id: 'm\uD800', role: 'user', content: 'hi' }], 'messages[0].id'],
  [
    'a lone surrogate in tool call arguments',
    () => [{ role: 'assistant', content: '', toolCalls: [call('c1', '{"q":"\uD800"}')] }],
    'messages[0].toolCalls[0].function.arguments',
  ],
  ['a lone surrogate in a tool call id', () => [{ role: 'assistant', content: '', toolCalls: [call('c\uDFFF')] }], 'messages[0].toolCalls[0].id'],
  ['NUL in a name', () => [{ role: 'user', content: 'hi', name: 'a\u0000' }], 'messages[0].name'],
  ['NUL in tool call arguments', () => [{ role: 'assistant', content: '', toolCalls: [call('c1', '\u0000')] }], 'messages[0].toolCalls[0].function.arguments'],
  ['a tool message without toolCallId', () => [{ role: 'tool', content: '42' }], 'messages[0].toolCallId'],
  [
    'a tool result whose call exists nowhere',
    () => [
      { role: 'user', content: 'q' },
      { role: 'tool', content: '42', toolCallId: 'ghost' },
    ],
    'messages[1].toolCallId',
  ],
  [
    'a tool result before its call in the batch',
    () => [
      { role: 'tool', content: '42', toolCallId: 'c1' },
      { role: 'assistant', content: '', toolCalls: [call('c1')] },
    ],
    'messages[0].toolCallId',
  ],
  [
    'a tool result separated from its call by a user message',
    () => [
      { role: 'assistant', content: '', toolCalls: [call('c1')] },
      { role: 'user', content: 'meanwhile' },
      { role: 'tool', content: '42', toolCallId: 'c1' },
    ],
    'messages[2].toolCallId',
  ],
  [
    'a tool result separated from its call by an assistant message',
    () => [
      { role: 'assistant', content: '', toolCalls: [call('c1')] },
      { role: 'assistant', content: 'thinking' },
      { role: 'tool', content: '42', toolCallId: 'c1' },
    ],
    'messages[2].toolCallId',
  ],
  [
    'a tool result whose call id is only text of a user message',
    () => [
      { role: 'user', content: '{"toolCalls":[{"id":"c1"}]}' },
      { role: 'tool', content: '42', toolCallId: 'c1' },
    ],
    'messages[1].toolCallId',
  ],
  ['duplicate tool call ids in one message', () => [{ role: 'assistant', content: '', toolCalls: [call('c1'), call('c1')] }], 'messages[0].toolCalls[1].id'],
  ["the conversation's clip-archive id", (conversationId) => [{ id: `clip-archive-${conversationId}`, role: 'user', content: 'hi' }], 'messages[0].id'],
  ['a message id over 1 KiB', () => [{ id: 'x'.repeat(1025), role: 'user', content: 'hi' }], 'messages[0].id'],
  ['an empty session id', () => [{ role: 'user', content: 'hi', sessionId: '' }], 'messages[0].sessionId'],
  ['a session id over 256 bytes', () => [{ role: 'user', content: 'hi', sessionId: 'é'.repeat(129) }], 'messages[0].sessionId'],
  ['a numeric session id', () => [{ role: 'user', content: 'hi', sessionId: 7 }], 'messages[0].sessionId'],
  [
    'NUL in a session id',
    () => [
      { role: 'user', content: 'ok' },
      { role: 'user', content: 'hi', sessionId: 'a\u0000' },
    ],
    'messages[1].sessionId',
  ],
  ['a date that does not exist (2023-02-29)', () => [{ role: 'user', content: 'hi', createdAt: '2023-02-29T10:00:00Z' }], 'messages[0].createdAt'],
  ['a non-ISO date string', () => [{ role: 'user', content: 'hi', createdAt: '1 2 3' }], 'messages[0].createdAt'],
  ['a month 13', () => [{ role: 'user', content: 'hi', createdAt: '2024-13-01' }], 'messages[0].createdAt'],
  ['a date after year 9999', () => [{ role: 'user', content: 'hi', createdAt: new Date(Date.UTC(10000, 0, 1)) }], 'messages[0].createdAt'],
  ['a numeric date', () => [{ role: 'user', content: 'hi', createdAt: 1_700_000_000_000 }], 'messages[0].createdAt'],
];

for (const backend of storeBackends()) {
  describe(`${backend.name}: append refuses bad input, naming the field and storing nothing`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    /** Asserts the refusal and that the conversation still holds exactly `before`. */
    async function expectRefused(conversationId: string, messages: unknown[], field: string, before: ConversationMessage[] = []): Promise<void> {
      const attempt = store.append(conversationId, messages as never);
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ code: 'invalid_argument', field, message: expect.stringContaining(`Invalid argument ${field}:`) });
      expect(await store.loadHistory(conversationId)).toStrictEqual(before);
    }

    it.each(REFUSED)('refuses %s', async (_case, build, field) => {
      const conversationId = newConversation();
      await expectRefused(conversationId, build(conversationId), field);
    });

    it('refuses the same batch after stored messages, leaving them as they were', async () => {
      const conversationId = newConversation();
      const before = await store.append(conversationId, [{ role: 'user', content: 'kept' }]);
      await expectRefused(
        conversationId,
        [
          { role: 'user', content: 'fine' },
          { role: 'tool', content: '42', toolCallId: 'ghost' },
        ],
        'messages[1].toolCallId',
        before,
      );
    });

    it('refuses an id already stored in the conversation, naming messages[i].id; the next append gets the next seq', async () => {
      const conversationId = newConversation();
      const before = await store.append(conversationId, [{ id: 'taken', role: 'user', content: 'first' }]);
      await expectRefused(
        conversationId,
        [
          { id: 'fresh', role: 'user', content: 'a' },
          { id: 'taken', role: 'user', content: 'b' },
        ],
        'messages[1].id',
        before,
      );
      const [next] = await store.append(conversationId, [{ id: 'fresh', role: 'user', content: 'a' }]);
      expect(next!.seq).toBe(2);
    });

    it('refuses a conversation id with a lone surrogate everywhere (the driver would store U+FFFD instead)', async () => {
      const lone = 'conv-\uD800';
      await expect(store.append(lone, [{ role: 'user', content: 'x' }])).rejects.toMatchObject({ field: 'conversationId' });
      await expect(store.loadHistory(lone)).rejects.toMatchObject({ field: 'conversationId' });
      await expect(store.deleteByIds(lone, ['m'])).rejects.toMatchObject({ field: 'conversationId' });
      await expect(store.commitCompaction({ conversationId: lone, operationId: 'op', deleteIds: [], clipArchive: 's', labels: [] })).rejects.toMatchObject({
        field: 'commit.conversationId',
      });
      // What it would have become: nothing was stored there.
      expect(await store.loadHistory('conv-\uFFFD')).toEqual([]);
    });

    it('refuses a conversation id with NUL or over 1 KiB, and an operation id over 1 KiB', async () => {
      await expect(store.append('a\u0000b', [{ role: 'user', content: 'x' }])).rejects.toMatchObject({ field: 'conversationId' });
      const long = 'c'.repeat(1025);
      await expect(store.append(long, [{ role: 'user', content: 'x' }])).rejects.toMatchObject({ field: 'conversationId' });
      await expect(
        store.commitCompaction({ conversationId: 'c', operationId: 'o'.repeat(1025), deleteIds: [], clipArchive: 's', labels: [] }),
      ).rejects.toMatchObject({ field: 'commit.operationId' });
      expect((await store.listConversations()).map((c) => c.id)).not.toContain(long);
    });

    it('refuses content over the default maximum (10 MiB of UTF-8) before sending anything', async () => {
      const conversationId = newConversation();
      await expectRefused(conversationId, [{ role: 'user', content: 'x'.repeat(DEFAULT_MAX_MESSAGE_BYTES + 1) }], 'messages[0].content');
    });

    it('ignores a seq given by the caller: the store assigns 1, 2, 3 in order', async () => {
      const conversationId = newConversation();
      const stored = await store.append(conversationId, [
        { role: 'user', content: 'a', seq: 9 },
        { role: 'user', content: 'b', seq: 3 },
      ] as never);
      expect(stored.map((m) => m.seq)).toEqual([1, 2]);
      expect((await store.loadHistory(conversationId)).map((m) => [m.seq, m.content])).toEqual([
        [1, 'a'],
        [2, 'b'],
      ]);
    });

    it('accepts a tool result whose call is earlier in the batch or stored live, with reused and hostile call ids', async () => {
      const conversationId = newConversation();
      const hostile = `x"}]', '%_\\ OR 1=1 --`;
      await store.append(conversationId, [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: '', toolCalls: [call('c1'), call(hostile)] },
        { role: 'tool', content: 'r1', toolCallId: 'c1' },
      ]);
      // The call is stored, the result comes in a later append (as an agent loop does).
      await store.append(conversationId, [{ role: 'tool', content: 'r2', toolCallId: hostile }]);
      // Datasets reuse call ids across turns: each result answers some earlier call with that id.
      await store.append(conversationId, [
        { role: 'assistant', content: '', toolCalls: [call('c1')] },
        { role: 'tool', content: 'r3', toolCallId: 'c1' },
      ]);
      // A pending call at the end of a batch is fine.
      await store.append(conversationId, [{ role: 'assistant', content: '', toolCalls: [call('c9')] }]);
      expect((await store.loadHistory(conversationId)).map((m) => m.toolCallId ?? m.role)).toEqual([
        'user',
        'assistant',
        'c1',
        hostile,
        'assistant',
        'c1',
        'assistant',
      ]);
    });

    it('refuses a tool result whose stored call is no longer the group it would join', async () => {
      const conversationId = newConversation();
      await store.append(conversationId, [
        { role: 'assistant', content: '', toolCalls: [call('c1')] },
        { role: 'tool', content: 'r1', toolCallId: 'c1' },
      ]);
      await store.append(conversationId, [{ role: 'user', content: 'next question' }]);
      const before = await store.loadHistory(conversationId);
      await expectRefused(conversationId, [{ role: 'tool', content: 'late', toolCallId: 'c1' }], 'messages[0].toolCallId', before);
    });

    it('refuses a tool result whose call is stored only in another conversation, or was deleted', async () => {
      const a = newConversation();
      const b = newConversation();
      const [, assistant] = await store.append(a, [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: '', toolCalls: [call('shared')] },
      ]);
      await expectRefused(b, [{ role: 'tool', content: 'r', toolCallId: 'shared' }], 'messages[0].toolCallId');
      await store.deleteByIds(a, [assistant!.id]);
      const before = await store.loadHistory(a);
      await expectRefused(a, [{ role: 'tool', content: 'r', toolCallId: 'shared' }], 'messages[0].toolCallId', before);
    });

    it('inside transaction(), a refused append rolls back what the transaction wrote before it', async () => {
      const conversationId = newConversation();
      const attempt = store.transaction(async (tx) => {
        await tx.append(conversationId, [{ role: 'user', content: 'written first' }]);
        await tx.append(conversationId, [{ role: 'tool', content: 'r', toolCallId: 'ghost' }]);
      });
      await expect(attempt).rejects.toMatchObject({ field: 'messages[0].toolCallId' });
      expect(await store.loadHistory(conversationId)).toEqual([]);
    });
  });

  describe(`${backend.name}: a configured maxMessageBytes`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ store, cleanup } = await openConfiguredStore(backend.name, { maxMessageBytes: 64 }));
    });
    afterAll(() => cleanup());

    it('stores a message of exactly the maximum and refuses one byte more, counting UTF-8 bytes', async () => {
      const conversationId = newConversation();
      const [stored] = await store.append(conversationId, [{ id: 'm1', role: 'user', content: 'x'.repeat(62) }]);
      expect(stored!.content).toHaveLength(62);
      const before = await store.loadHistory(conversationId);
      for (const [content, field] of [
        ['x'.repeat(65), 'messages[0].content'],
        // 33 characters, 66 bytes.
        ['é'.repeat(33), 'messages[0].content'],
        // The content fits; with the id "m2" it does not.
        ['x'.repeat(63), 'messages[0]'],
      ] as const) {
        const attempt = store.append(conversationId, [{ id: 'm2', role: 'user', content }]);
        await expect(attempt).rejects.toMatchObject({ code: 'invalid_argument', field, message: expect.stringContaining('maxMessageBytes') });
      }
      const withCall = store.append(conversationId, [{ id: 'm3', role: 'assistant', content: 'short', toolCalls: [call('c', 'a'.repeat(60))] }]);
      await expect(withCall).rejects.toMatchObject({ field: 'messages[0]' });
      expect(await store.loadHistory(conversationId)).toStrictEqual(before);
    });
  });

  // Past these sizes PostgreSQL refuses the index entry (over 2,704 bytes) with a driver error.
  describe(`${backend.name}: the largest keys`, () => {
    it('a 256-byte namespace with 1 KiB conversation and message ids of incompressible text stores, loads and commits', async () => {
      const namespace = randomBytes(128).toString('hex');
      const { store, cleanup } = await openConfiguredStore(backend.name, { namespace });
      try {
        // 256 three-byte characters followed by ASCII: 1,024 bytes that do not compress.
        const conversationId =
          Array.from(randomBytes(256), (byte, i) => String.fromCharCode(0x4e00 + byte * 64 + (i % 64))).join('') + randomBytes(128).toString('hex');
        const messageId = randomBytes(512).toString('hex');
        expect(Buffer.byteLength(conversationId)).toBe(1024);
        await store.append(conversationId, [
          { id: messageId, role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
        ]);
        await store.commitCompaction({ conversationId, operationId: `op-${randomUUID()}`, deleteIds: [messageId], clipArchive: 'summary', labels: [] });
        expect((await store.loadHistory(conversationId)).map((m) => m.content)).toEqual(['summary', 'b']);
      } finally {
        await cleanup();
      }
    });
  });
}

describe('store options', () => {
  it.each([0, -1, 1.5, Number.NaN, 2 ** 31, '1000'])('refuses maxMessageBytes %s with InvalidConfigError naming it, before opening', async (value) => {
    const attempt = createKyselyPersistence({ dialect: 'pglite', dataDir: '/nonexistent/never-created', maxMessageBytes: value as number });
    await expect(attempt).rejects.toBeInstanceOf(InvalidConfigError);
    await expect(attempt).rejects.toMatchObject({ field: 'maxMessageBytes' });
  });

  it.each([
    ['a lone surrogate', 'ns\uD800'],
    ['NUL', 'ns\u0000'],
    ['over 256 bytes', 'n'.repeat(257)],
    ['empty', ''],
  ])('refuses a namespace with %s', async (_case, namespace) => {
    const attempt = createKyselyPersistence({ dialect: 'pglite', dataDir: '/nonexistent/never-created', namespace });
    await expect(attempt).rejects.toMatchObject({ code: 'invalid_argument', field: 'namespace' });
  });
});
