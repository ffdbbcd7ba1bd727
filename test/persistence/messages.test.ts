import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageDigest } from '../../src/conversation/message-digest.js';
import type { NewMessage, ToolCall } from '../../src/conversation/types.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

const newConversation = () => `conv-${randomUUID()}`;

for (const backend of storeBackends()) {
  describe(`${backend.name}: append, loadHistory, deleteByIds`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    it('names its backend', () => {
      expect(store.backend).toBe(backend.name);
    });

    it('assigns increasing seqs across appends, starting at 1, never reusing a deleted one', async () => {
      const id = newConversation();
      const first = await store.append(id, [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
      ]);
      const second = await store.append(id, [{ role: 'user', content: 'three' }]);
      expect([...first, ...second].map((m) => m.seq)).toEqual([1, 2, 3]);
      await store.deleteByIds(id, [second[0]!.id]);
      const third = await store.append(id, [{ role: 'user', content: 'four' }]);
      expect(third[0]!.seq).toBe(4);
      expect((await store.loadHistory(id)).map((m) => m.content)).toEqual(['one', 'two', 'four']);
    });

    it('round-trips every field: tool calls, tool call id, name, unicode, explicit ids and dates', async () => {
      const id = newConversation();
      const toolCalls: ToolCall[] = [
        { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"naïve \\"quoted\\" 😀"}' } },
        { id: 'call_2', type: 'function', function: { name: 'noop', arguments: '' } },
      ];
      const input: NewMessage[] = [
        { id: 'm-sys', role: 'system', content: 'You are helpful.', createdAt: new Date('2023-05-08T13:56:00.123Z') },
        { id: 'm-user', role: 'user', content: 'Grüße, 你好, مرحبا, e\u0301, 👩‍💻\nline two', createdAt: '2023-05-08T15:57:00+02:00' },
        { id: 'm-asst', role: 'assistant', content: '', toolCalls, createdAt: '2023-05-08T13:58:00Z' },
        { id: 'm-tool', role: 'tool', content: '{"result": 42}', toolCallId: 'call_1', name: 'lookup', createdAt: '2023-05-08T13:59:00.000Z' },
      ];
      const stored = await store.append(id, input);
      const expected = [
        { id: 'm-sys', conversationId: id, seq: 1, role: 'system', content: 'You are helpful.', createdAt: '2023-05-08T13:56:00.123Z', kind: 'message' },
        { id: 'm-user', conversationId: id, seq: 2, role: 'user', content: input[1]!.content, createdAt: '2023-05-08T13:57:00.000Z', kind: 'message' },
        { id: 'm-asst', conversationId: id, seq: 3, role: 'assistant', content: '', toolCalls, createdAt: '2023-05-08T13:58:00.000Z', kind: 'message' },
        {
          id: 'm-tool',
          conversationId: id,
          seq: 4,
          role: 'tool',
          content: '{"result": 42}',
          toolCallId: 'call_1',
          name: 'lookup',
          createdAt: '2023-05-08T13:59:00.000Z',
          kind: 'message',
        },
      ];
      expect(stored).toStrictEqual(expected);
      expect(await store.loadHistory(id)).toStrictEqual(expected);
    });

    it('reads back the millisecond of times before 1970, in year 1 and in year 9999 as they were appended', async () => {
      const id = newConversation();
      const times = [
        '1969-12-31T23:59:59.999Z',
        '1900-06-15T12:00:00.001Z',
        '0001-01-01T00:00:00.500Z',
        '2023-05-08T13:56:00.123Z',
        '9999-12-31T23:59:59.999Z',
      ];
      const stored = await store.append(
        id,
        times.map((createdAt, i) => ({ id: `t${i}`, role: 'user' as const, content: `at ${i}`, createdAt: new Date(createdAt) })),
      );
      expect(stored.map((m) => m.createdAt)).toEqual(times);
      expect((await store.loadHistory(id)).map((m) => m.createdAt)).toEqual(times);
    });

    it('round-trips a session id, through the content column, and keeps the digest of a message without one', async () => {
      const id = newConversation();
      const stored = await store.append(id, [
        { id: 's1', role: 'user', content: 'hello', sessionId: 'monday-ü' },
        { id: 's2', role: 'assistant', content: 'hi' },
      ]);
      expect(stored.map((m) => m.sessionId)).toEqual(['monday-ü', undefined]);
      expect('sessionId' in stored[1]!).toBe(false);
      const loaded = await store.loadHistory(id);
      expect(loaded.map((m) => m.sessionId)).toEqual(['monday-ü', undefined]);
      expect(loaded).toStrictEqual(stored);
      const digests = new Map((await store.findUsedIds(id, ['s1', 's2'])).map((u) => [u.id, u.digest]));
      // The session is part of the message's digest when it has one; without one the digest is as it always was.
      expect(digests.get('s1')).toBe(messageDigest({ role: 'user', content: 'hello', sessionId: 'monday-ü' }));
      expect(digests.get('s1')).not.toBe(messageDigest({ role: 'user', content: 'hello' }));
      expect(digests.get('s2')).toBe(messageDigest({ role: 'assistant', content: 'hi' }));
    });

    it('defaults the id to a UUID and createdAt to now', async () => {
      const before = Date.now();
      const [message] = await store.append(newConversation(), [{ role: 'user', content: 'hi' }]);
      expect(message!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const created = Date.parse(message!.createdAt);
      expect(created).toBeGreaterThanOrEqual(before);
      expect(created).toBeLessThanOrEqual(Date.now());
      expect(message!.createdAt).toBe(new Date(created).toISOString());
    });

    it('returns an empty list for an unknown conversation and for an empty append', async () => {
      const id = newConversation();
      expect(await store.append(id, [])).toEqual([]);
      expect(await store.loadHistory(id)).toEqual([]);
    });

    it('deletes exactly the given ids of that conversation, not the same ids elsewhere', async () => {
      const a = newConversation();
      const b = newConversation();
      const shared = [
        { id: 'x1', role: 'user' as const, content: 'a1' },
        { id: 'x2', role: 'assistant' as const, content: 'a2' },
        { id: 'x3', role: 'user' as const, content: 'a3' },
      ];
      await store.append(a, shared);
      await store.append(b, shared);
      expect(await store.deleteByIds(a, ['x1', 'x3', 'missing'])).toBe(2);
      expect((await store.loadHistory(a)).map((m) => m.id)).toEqual(['x2']);
      expect((await store.loadHistory(b)).map((m) => m.id)).toEqual(['x1', 'x2', 'x3']);
      expect(await store.deleteByIds(a, [])).toBe(0);
      expect(await store.deleteByIds(a, ['x1'])).toBe(0);
    });

    it('refuses an id that already exists in the conversation, and writes nothing of that batch', async () => {
      const id = newConversation();
      await store.append(id, [{ id: 'dup', role: 'user', content: 'first' }]);
      await expect(
        store.append(id, [
          { id: 'fresh', role: 'user', content: 'second' },
          { id: 'dup', role: 'user', content: 'again' },
        ]),
      ).rejects.toMatchObject({ code: 'invalid_argument', field: 'messages[1].id', message: expect.stringContaining('already used') });
      expect((await store.loadHistory(id)).map((m) => m.id)).toEqual(['dup']);
      const [next] = await store.append(id, [{ role: 'user', content: 'after' }]);
      expect(next!.seq).toBe(2);
    });

    it('refuses an id whose message already left the live table, in this conversation only', async () => {
      const id = newConversation();
      const other = newConversation();
      await store.append(id, [
        { id: 'gone', role: 'user', content: 'archived later' },
        { id: 'kept', role: 'assistant', content: 'stays' },
      ]);
      expect(await store.deleteByIds(id, ['gone'])).toBe(1);
      await expect(store.append(id, [{ id: 'gone', role: 'user', content: 'a new message with an old id' }])).rejects.toMatchObject({
        code: 'invalid_argument',
        field: 'messages[0].id',
        message: expect.stringContaining('already used'),
      });
      expect((await store.loadHistory(id)).map((m) => m.id)).toEqual(['kept']);
      // Ids are scoped by conversation: another one may use the same id.
      expect((await store.append(other, [{ id: 'gone', role: 'user', content: 'elsewhere' }])).map((m) => m.id)).toEqual(['gone']);
    });

    it('findUsedIds answers every id ever accepted, live or not, with the digest of its message', async () => {
      const id = newConversation();
      const call = { id: 'c1', type: 'function' as const, function: { name: 'read', arguments: '{"path":"a"}' } };
      await store.append(id, [
        { id: 'u1', role: 'user', content: 'hello', createdAt: '2024-01-01T00:00:00Z' },
        { id: 'a1', role: 'assistant', content: '', toolCalls: [call] },
        { id: 't1', role: 'tool', content: 'file a', toolCallId: 'c1' },
      ]);
      await store.deleteByIds(id, ['u1']);
      const used = await store.findUsedIds(id, ['u1', 'a1', 't1', 'never']);
      const byId = new Map(used.map((u) => [u.id, u.digest]));
      expect([...byId.keys()].sort()).toEqual(['a1', 't1', 'u1']);
      // The digest is the message's substance, not its time: a re-sent copy matches, an edited one does not.
      expect(byId.get('u1')).toBe(messageDigest({ role: 'user', content: 'hello' }));
      expect(byId.get('a1')).toBe(messageDigest({ role: 'assistant', content: '', toolCalls: [call] }));
      expect(byId.get('t1')).not.toBe(messageDigest({ role: 'tool', content: 'file b', toolCallId: 'c1' }));
      expect(await store.findUsedIds(id, [])).toEqual([]);
    });

    it('gives 20 concurrent appends to one conversation unique, contiguous seqs', async () => {
      const id = newConversation();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(id, [{ id: `m${i}`, role: 'user', content: `message ${i}` }])));
      const seqs = results.map((r) => r[0]!.seq).sort((x, y) => x - y);
      expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const history = await store.loadHistory(id);
      expect(history.map((m) => m.seq)).toEqual(seqs);
      // Each stored row keeps the seq its append call returned.
      const bySeq = new Map(results.map((r) => [r[0]!.seq, r[0]!.id]));
      for (const message of history) expect(message.id).toBe(bySeq.get(message.seq));
    });

    it('appends a large batch (over one INSERT batch) in order', async () => {
      const id = newConversation();
      const stored = await store.append(
        id,
        Array.from({ length: 2500 }, (_, i) => ({ role: 'user' as const, content: `m${i}` })),
      );
      expect(stored.map((m) => m.seq)).toEqual(Array.from({ length: 2500 }, (_, i) => i + 1));
      expect(
        await store.deleteByIds(
          id,
          stored.map((m) => m.id),
        ),
      ).toBe(2500);
    });

    it('lists conversations with counts of ordinary messages and ISO update times', async () => {
      const id = newConversation();
      const [m1] = await store.append(id, [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ]);
      await store.commitCompaction({
        conversationId: id,
        operationId: `op-${randomUUID()}`,
        deleteIds: [m1!.id],
        clipArchive: '[Context Summary]',
        labels: [],
      });
      const listed = (await store.listConversations()).find((c) => c.id === id);
      expect(listed).toEqual({ id, messageCount: 1, updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    });
  });
}
