import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, MemfoldError } from '../../src/errors.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

const HOSTILE_IDS = ["a'; drop table messages; --", '"', '\\', '%_', '%', 'a_c', "x') or ('1'='1", '$1', '{"a":1}', '{a,b}'];

for (const backend of storeBackends()) {
  describe(`${backend.name}: hostile ids and invalid input`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    it('stores conversations with SQL metacharacters in their ids, each scoped to itself', async () => {
      // 'abc' would match the LIKE patterns '%', '%_' and 'a_c' if ids were ever compared with LIKE.
      for (const id of [...HOSTILE_IDS, 'abc']) {
        await store.append(id, [
          { id: `${id}|1`, role: 'user', content: `in ${id}` },
          { id: `${id}|2`, role: 'user', content: 'second' },
        ]);
      }
      for (const id of [...HOSTILE_IDS, 'abc']) {
        const history = await store.loadHistory(id);
        expect(history.map((m) => [m.conversationId, m.id])).toEqual([
          [id, `${id}|1`],
          [id, `${id}|2`],
        ]);
      }
      const listed = new Set((await store.listConversations()).map((c) => c.id));
      for (const id of HOSTILE_IDS) expect(listed.has(id)).toBe(true);
      // Hostile message ids delete exactly themselves.
      expect(await store.deleteByIds('%_', ['%_|1', '%'])).toBe(1);
      expect((await store.loadHistory('%_')).map((m) => m.id)).toEqual(['%_|2']);
      expect((await store.loadHistory('%')).map((m) => m.id)).toEqual(['%|1', '%|2']);
      expect((await store.loadHistory('abc')).map((m) => m.id)).toEqual(['abc|1', 'abc|2']);
      for (const id of HOSTILE_IDS.filter((id) => id !== '%_')) expect(await store.deleteByIds(id, [`${id}|2`])).toBe(1);
      expect((await store.loadHistory('abc')).map((m) => m.id)).toEqual(['abc|1', 'abc|2']);
      // The tables survived the injection attempt.
      expect(await store.loadHistory("a'; drop table messages; --")).toHaveLength(1);
      const report = await store.commitCompaction({
        conversationId: '"',
        operationId: `op-${randomUUID()}`,
        deleteIds: ['"|1'],
        clipArchive: 'it\'s "quoted" \\ %_',
        labels: ["l'1"],
      });
      expect(report).toMatchObject({ deleted: 1, clipArchive: { conversationId: '"', content: 'it\'s "quoted" \\ %_' } });
      expect(await store.loadHistory('"')).toStrictEqual([report.clipArchive]);
      expect((await store.loadHistory('abc')).map((m) => m.id)).toEqual(['abc|1', 'abc|2']);
    });

    it.each([
      [
        'unknown role',
        [
          { role: 'user', content: 'ok' },
          { role: 'robot', content: 'x' },
        ],
        'messages[1].role',
      ],
      ['non-string content', [{ role: 'user', content: 42 }], 'messages[0].content'],
      [
        'invalid date',
        [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
          { role: 'user', content: 'c', createdAt: 'yesterday-ish' },
        ],
        'messages[2].createdAt',
      ],
      ['invalid Date object', [{ role: 'user', content: 'a', createdAt: new Date(Number.NaN) }], 'messages[0].createdAt'],
      ['tool call without function', [{ role: 'assistant', content: '', toolCalls: [{ id: 'c', type: 'function' }] }], 'messages[0].toolCalls[0].function'],
      ['non-string toolCallId', [{ role: 'tool', content: 'r', toolCallId: 7 }], 'messages[0].toolCallId'],
      ['clip-archive kind', [{ role: 'system', content: 's', kind: 'clip_archive' }], 'messages[0].kind'],
      ['NUL in content', [{ role: 'user', content: 'a\u0000b' }], 'messages[0].content'],
      ['empty id', [{ id: '', role: 'user', content: 'a' }], 'messages[0].id'],
      [
        'duplicate ids in one batch',
        [
          { id: 'd', role: 'user', content: 'a' },
          { id: 'd', role: 'user', content: 'b' },
        ],
        'messages[1].id',
      ],
      ['not an object', [null], 'messages[0]'],
    ])('refuses %s with InvalidArgumentError naming the field, writing nothing', async (_case, messages, field) => {
      const id = `conv-${randomUUID()}`;
      const attempt = store.append(id, messages as never);
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ code: 'invalid_argument', field, message: expect.stringContaining(field) });
      expect(await store.loadHistory(id)).toEqual([]);
    });

    it('refuses a missing conversation id and a non-array message list', async () => {
      await expect(store.append('', [{ role: 'user', content: 'a' }])).rejects.toMatchObject({ field: 'conversationId' });
      await expect(store.append('c', 'hello' as never)).rejects.toMatchObject({ field: 'messages' });
      await expect(store.deleteByIds('c', 'm1' as never)).rejects.toMatchObject({ field: 'ids' });
    });

    it('refuses calls after close with a MemfoldError persistence_error', async () => {
      const { persistence, cleanup: close } = await backend.open();
      await close();
      const attempt = persistence.loadHistory('c');
      await expect(attempt).rejects.toSatisfy((error: unknown) => MemfoldError.isInstance(error));
      await expect(attempt).rejects.toMatchObject({ code: 'persistence_error', message: expect.stringMatching(/closed/) });
    });
  });
}
