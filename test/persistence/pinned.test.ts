/**
 * Pinned messages on every backend (migrations/015_pinned_messages.sql on the database ones): `append` takes
 * `pinned`, `loadHistory` reads it back (absent when not pinned), `setPinned` pins and unpins live messages and counts
 * them, in a transaction too; and neither commit takes a pinned row, so a pin that lands while a compaction or a
 * clearing runs fails that commit, writing nothing, instead of archiving the message away.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, MemfoldError } from '../../src/errors.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

for (const backend of storeBackends()) {
  describe(`${backend.name}: pinned messages`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    async function seed(): Promise<string> {
      const id = `pin-${randomUUID()}`;
      await store.append(id, [
        { id: 'q', role: 'user', content: 'The deploy key rotates on Fridays.', pinned: true },
        { id: 'call', role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
        { id: 'r1', role: 'tool', toolCallId: 'c1', content: 'result '.repeat(50) },
        { id: 'a', role: 'assistant', content: 'Noted.', pinned: false },
      ]);
      return id;
    }
    const pinnedIds = async (id: string) => (await store.loadHistory(id)).filter((m) => m.pinned === true).map((m) => m.id);

    it('stores the flag given to append and reads it back, absent on a message not pinned', async () => {
      const id = await seed();
      const rows = await store.loadHistory(id);
      expect(rows.find((m) => m.id === 'q')).toMatchObject({ pinned: true });
      for (const m of rows.filter((m) => m.id !== 'q')) expect(m).not.toHaveProperty('pinned');
    });

    it('pins and unpins live messages, counting those it found, ignoring unknown ids; in a transaction too', async () => {
      const id = await seed();
      expect(await store.setPinned(id, ['r1', 'a', 'nope'], true)).toBe(2);
      expect(await pinnedIds(id)).toEqual(['q', 'r1', 'a']);
      expect(await store.setPinned(id, ['q', 'a'], false)).toBe(2);
      expect(await pinnedIds(id)).toEqual(['r1']);
      await store.transaction(async (tx) => expect(await tx.setPinned(id, ['call'], true)).toBe(1));
      expect(await pinnedIds(id)).toEqual(['call', 'r1']);
      expect(await store.setPinned(id, [], true)).toBe(0);
    });

    it('refuses a flag that is not a boolean, naming the field', async () => {
      const id = `pin-${randomUUID()}`;
      await expect(store.append(id, [{ role: 'user', content: 'x', pinned: 'yes' as unknown as boolean }])).rejects.toMatchObject({
        field: 'messages[0].pinned',
      });
      await expect(store.setPinned(id, ['q'], 1 as unknown as boolean)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it('a compaction commit that would take a pinned row changes nothing', async () => {
      const id = await seed();
      const before = await store.loadHistory(id);
      const operationId = `op-${randomUUID()}`;
      await store.recordOperation({ id: operationId, conversationId: id, status: 'archived', messageIds: ['q', 'a'], labels: ['b-1'] });
      const commit = store.commitCompaction({ conversationId: id, operationId, deleteIds: ['q', 'a'], clipArchive: 'clip', labels: ['b-1'] });
      await expect(commit).rejects.toBeInstanceOf(MemfoldError);
      await expect(commit).rejects.toMatchObject({ details: { field: 'commit.deleteIds' } });
      expect(await store.loadHistory(id)).toEqual(before);
      // Unpinned, the same commit goes through.
      await store.setPinned(id, ['q'], false);
      expect(await store.commitCompaction({ conversationId: id, operationId, deleteIds: ['q', 'a'], clipArchive: 'clip', labels: ['b-1'] })).toMatchObject({
        deleted: 2,
      });
    });

    it('names the pinned rows a commit would take, in either mode, with the ids sent or as recorded, and takes them once unpinned', async () => {
      for (const idsRecorded of [false, true]) {
        for (const mode of ['delete', 'overlay'] as const) {
          const id = await seed();
          const before = await store.loadHistory(id);
          const operationId = `op-${randomUUID()}`;
          await store.recordOperation({ id: operationId, conversationId: id, status: 'archived', mode, messageIds: ['q', 'a'], labels: [] });
          const input = { conversationId: id, operationId, deleteIds: ['q', 'a'], clipArchive: 'clip', labels: [], mode, idsRecorded };
          await expect(store.commitCompaction(input)).rejects.toThrow(/would take 1 pinned message/);
          expect(await store.loadHistory(id, { includeCompacted: true })).toEqual(before);
          await store.setPinned(id, ['q'], false);
          const report = await store.commitCompaction(input);
          expect([report.deleted, report.marked]).toEqual(mode === 'delete' ? [2, 0] : [0, 2]);
          expect((await store.loadHistory(id)).map((m) => m.id)).toEqual([report.clipArchive.id, 'call', 'r1']);
        }
      }
    });

    it('deleteByIds deletes a pinned row', async () => {
      const id = await seed();
      expect(await store.deleteByIds(id, ['q'])).toBe(1);
    });

    it('a clearing commit that would clear a pinned output changes nothing', async () => {
      const id = await seed();
      await store.setPinned(id, ['r1'], true);
      const before = await store.loadHistory(id);
      const operationId = `op-${randomUUID()}`;
      await store.recordOperation({ id: operationId, conversationId: id, kind: 'clear_tool_outputs', status: 'archived', messageIds: ['r1'], labels: ['o-1'] });
      const clearing = store.commitClearing({
        conversationId: id,
        operationId,
        cleared: [{ id: 'r1', content: 'placeholder', label: 'o-1' }],
        labels: ['o-1'],
      });
      await expect(clearing).rejects.toMatchObject({ details: { field: 'commit.cleared[0].id' } });
      expect(await store.loadHistory(id)).toEqual(before);
    });
  });
}
