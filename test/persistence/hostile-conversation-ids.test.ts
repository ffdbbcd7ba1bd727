/**
 * Conversation ids that would break a careless query: LIKE patterns and their escapes, SQL, case,
 * whitespace, Unicode normalization, 1,000 characters. Each pair below holds ids a pattern match,
 * a prefix match, a case fold or a normalization would confuse; every operation on one must leave
 * the other exactly as it was. Runs on every backend.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../src/conversation/types.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

const PAIRS: Array<[string, string]> = [
  ['a%', 'ab'],
  ['a_', 'ab'],
  ['%', 'anything'],
  ['_', 'x'],
  ['a\\%', 'a\\x'],
  ['a\\', 'a\\\\'],
  ["'; drop table messages; --", "'"],
  ["x' or '1'='1", 'x'],
  ['$$ || $$', '$$'],
  ["E'\\x41'", 'A'],
  ['/* c */', '/*'],
  ['Conv', 'conv'],
  ['a ', 'a'],
  ['café', 'cafe\u0301'],
  ['ﬁle', 'file'],
  ['👩‍💻', '👩'],
  ['שלום', 'שלום\u200f'],
  ['x'.repeat(1000), 'x'.repeat(999)],
];

const call = (id: string): ToolCall => ({ id, type: 'function', function: { name: 'lookup', arguments: '{}' } });

for (const backend of storeBackends()) {
  describe(`${backend.name}: hostile conversation ids stay isolated`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    it.each(PAIRS)('%j and %j: append, load, delete, commit and tool results touch only their own conversation', async (hostile, neighbour) => {
      // A fresh prefix keeps the cases independent; both ids keep their hostile tail (trailing space, marks).
      const run = randomUUID().slice(0, 8);
      const id = `${run}${hostile}`;
      const other = `${run}${neighbour}`;
      for (const conversation of [id, other]) {
        await store.append(conversation, [
          { id: 'm1', role: 'user', content: `first of ${conversation}` },
          { id: 'm2', role: 'assistant', content: '', toolCalls: [call('call-1')] },
          { id: 'm3', role: 'tool', content: `result of ${conversation}`, toolCallId: 'call-1' },
        ]);
      }
      const otherBefore = await store.loadHistory(other);
      expect(otherBefore.map((m) => m.content)).toEqual([`first of ${other}`, '', `result of ${other}`]);
      expect((await store.loadHistory(id)).map((m) => m.conversationId)).toEqual([id, id, id]);

      expect(await store.deleteByIds(id, ['m1'])).toBe(1);
      const report = await store.commitCompaction({
        conversationId: id,
        operationId: `op-${run}`,
        deleteIds: ['m2', 'm3'],
        clipArchive: `summary of ${id}`,
        labels: [`compaction-batch-${id}-x`],
      });
      expect(report).toMatchObject({ deleted: 2, clipArchive: { conversationId: id, id: `clip-archive-${id}`, seq: 0 } });
      expect(await store.loadHistory(id)).toStrictEqual([report.clipArchive]);
      // The call this conversation answered is archived now; the neighbour's identical call does not count.
      await expect(store.append(id, [{ role: 'tool', content: 'late', toolCallId: 'call-1' }])).rejects.toMatchObject({ field: 'messages[0].toolCallId' });

      expect(await store.loadHistory(other)).toStrictEqual(otherBefore);
      expect(await store.listOperations(other)).toEqual([]);
      expect((await store.listOperations(id)).map((op) => op.status)).toEqual(['committed']);
    });

    it('lists every hostile conversation under its exact id', async () => {
      const run = randomUUID().slice(0, 8);
      const ids = [...new Set(PAIRS.flat())].map((id) => `${run}${id}`);
      for (const id of ids) await store.append(id, [{ role: 'user', content: id }]);
      const listed = new Map((await store.listConversations()).map((c) => [c.id, c.messageCount]));
      for (const id of ids) expect(listed.get(id), id).toBe(1);
      for (const id of ids) expect((await store.loadHistory(id)).map((m) => m.content)).toEqual([id]);
    });

    it('a transaction on a hostile id commits or rolls back only that conversation', async () => {
      const run = randomUUID();
      const id = `a%${run}`;
      const other = `ab${run}`;
      await store.append(other, [{ role: 'user', content: 'neighbour' }]);
      await expect(
        store.transaction(async (tx) => {
          await tx.append(id, [{ role: 'user', content: 'rolled back' }]);
          await tx.deleteByIds(other, ['none']);
          throw new Error('caller failure');
        }),
      ).rejects.toThrow('caller failure');
      expect(await store.loadHistory(id)).toEqual([]);
      await store.transaction(async (tx) => {
        await tx.append(id, [{ role: 'user', content: 'kept' }]);
      });
      expect((await store.loadHistory(id)).map((m) => m.content)).toEqual(['kept']);
      expect((await store.loadHistory(other)).map((m) => m.content)).toEqual(['neighbour']);
    });
  });
}
