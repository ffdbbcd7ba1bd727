/**
 * Overlay mode in the live store, on every backend: a commit in `overlay` mode marks the archived rows instead of
 * deleting them, the live history and everything that reads it leave marked rows out, `includeCompacted` reads them
 * back, the mode is fixed by an operation's first record, and marks exist exactly while their operation is committed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

const newConversation = () => `conv-${randomUUID()}`;
const newOperation = () => `op-${randomUUID()}`;

for (const backend of storeBackends()) {
  describe(`${backend.name}: overlay commits`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    let exec: (statement: string) => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup, exec } = await backend.open());
    });
    afterAll(() => cleanup());

    /** A conversation of `n` user messages m1..mn. */
    async function seed(n: number, id = newConversation()): Promise<string> {
      await store.append(
        id,
        Array.from({ length: n }, (_, i) => ({ id: `m${i + 1}`, role: 'user' as const, content: `text ${i + 1}` })),
      );
      return id;
    }

    /** Record an overlay operation over `ids` and commit it; returns the operation id. */
    async function overlay(id: string, ids: string[], clip = '[Context Summary]'): Promise<string> {
      const operationId = newOperation();
      await store.recordOperation({ id: operationId, conversationId: id, status: 'planned', mode: 'overlay', messageIds: ids, labels: [] });
      await store.commitCompaction({ conversationId: id, operationId, deleteIds: ids, clipArchive: clip, labels: ['b'], mode: 'overlay' });
      return operationId;
    }

    const ids = (rows: ReadonlyArray<{ id: string }>) => rows.map((m) => m.id);

    it('marks exactly the archived ids in the same commit as the clip-archive; the live history leaves them out', async () => {
      const id = await seed(5);
      const operationId = newOperation();
      await store.recordOperation({ id: operationId, conversationId: id, status: 'archived', mode: 'overlay', messageIds: ['m1', 'm2', 'm3'], labels: [] });
      const report = await store.commitCompaction({
        conversationId: id,
        operationId,
        deleteIds: ['m1', 'm2', 'm3'],
        clipArchive: '[Context Summary v1]',
        labels: ['b'],
        mode: 'overlay',
      });
      expect(report).toMatchObject({ deleted: 0, marked: 3, clipArchive: { seq: 0, kind: 'clip_archive', content: '[Context Summary v1]' } });

      const live = await store.loadHistory(id);
      expect(live.map((m) => [m.seq, m.id])).toEqual([
        [0, report.clipArchive.id],
        [4, 'm4'],
        [5, 'm5'],
      ]);
      expect(live.every((m) => m.compactedBy === undefined)).toBe(true);

      const raw = await store.loadHistory(id, { includeCompacted: true });
      expect(raw.map((m) => [m.seq, m.id, m.compactedBy])).toEqual([
        [0, report.clipArchive.id, undefined],
        [1, 'm1', operationId],
        [2, 'm2', operationId],
        [3, 'm3', operationId],
        [4, 'm4', undefined],
        [5, 'm5', undefined],
      ]);
      // The kept rows are the messages as appended.
      expect(raw[1]).toMatchObject({ role: 'user', content: 'text 1', conversationId: id });
      expect(await store.listOperations(id)).toMatchObject([{ id: operationId, status: 'committed', mode: 'overlay', messageIds: ['m1', 'm2', 'm3'] }]);
    });

    it('every live read leaves overlay rows out: countLive, listConversations, deleteByIds; their ids stay used', async () => {
      const id = await seed(4);
      await overlay(id, ['m1', 'm2']);
      expect(await store.countLive(id, ['m1', 'm2', 'm3'])).toBe(1);
      expect((await store.listConversations()).find((c) => c.id === id)?.messageCount).toBe(2);
      expect(await store.deleteByIds(id, ['m1', 'm3'])).toBe(1);
      expect(ids(await store.loadHistory(id, { includeCompacted: true }))).toEqual([`clip-archive-${id}`, 'm1', 'm2', 'm4']);
      expect(ids(await store.findUsedIds(id, ['m1', 'm2'])).sort()).toEqual(['m1', 'm2']);
      await expect(store.append(id, [{ id: 'm2', role: 'user', content: 'again' }])).rejects.toMatchObject({ field: 'messages[0].id' });
    });

    it('a tool result answers the last live opener: an overlay row is not one', async () => {
      const id = newConversation();
      await store.append(id, [
        { id: 'u1', role: 'user', content: 'look it up' },
        { id: 'a1', role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'find', arguments: '{}' } }] },
      ]);
      await overlay(id, ['a1']);
      await expect(store.append(id, [{ role: 'tool', toolCallId: 'c1', content: 'found' }])).rejects.toMatchObject({ field: 'messages[0].toolCallId' });
    });

    it('never takes a row twice: a commit naming an overlay row is refused in either mode and changes nothing', async () => {
      const id = await seed(4);
      const first = await overlay(id, ['m1', 'm2'], '[Context Summary v1]');
      const before = await store.loadHistory(id, { includeCompacted: true });
      for (const mode of ['overlay', 'delete'] as const) {
        const attempt = store.commitCompaction({
          conversationId: id,
          operationId: newOperation(),
          deleteIds: ['m2', 'm3'],
          clipArchive: '[v2]',
          labels: [],
          mode,
        });
        await expect(attempt).rejects.toMatchObject({ code: 'persistence_error', details: { field: 'commit.deleteIds' } });
      }
      expect(await store.loadHistory(id, { includeCompacted: true })).toStrictEqual(before);
      expect((await store.listOperations(id)).map((o) => o.id)).toEqual([first]);
    });

    it('re-compaction takes only live rows; a delete-mode commit later deletes live rows and keeps the overlay rows', async () => {
      const id = await seed(6);
      const first = await overlay(id, ['m1', 'm2'], '[v1]');
      const second = await overlay(id, ['m3'], '[v2]');
      const third = newOperation();
      await store.recordOperation({ id: third, conversationId: id, status: 'planned', messageIds: ['m4'], labels: [] });
      expect(await store.commitCompaction({ conversationId: id, operationId: third, deleteIds: ['m4'], clipArchive: '[v3]', labels: [] })).toMatchObject({
        deleted: 1,
        marked: 0,
      });
      expect((await store.loadHistory(id)).map((m) => m.content)).toEqual(['[v3]', 'text 5', 'text 6']);
      expect((await store.loadHistory(id, { includeCompacted: true })).map((m) => [m.id, m.compactedBy])).toEqual([
        [`clip-archive-${id}`, undefined],
        ['m1', first],
        ['m2', first],
        ['m3', second],
        ['m5', undefined],
        ['m6', undefined],
      ]);
    });

    it('the mode is fixed by the first record: a commit or record naming the other mode is refused, writing nothing', async () => {
      const id = await seed(3);
      const operationId = newOperation();
      await store.recordOperation({ id: operationId, conversationId: id, status: 'planned', mode: 'overlay', messageIds: ['m1'], labels: [] });
      const before = await store.loadHistory(id, { includeCompacted: true });
      // A commit that names no mode means delete.
      await expect(store.commitCompaction({ conversationId: id, operationId, deleteIds: ['m1'], clipArchive: '[x]', labels: [] })).rejects.toMatchObject({
        code: 'invalid_argument',
        field: 'commit.mode',
        message: expect.stringContaining('recorded in overlay mode'),
      });
      await expect(
        store.recordOperation({ id: operationId, conversationId: id, status: 'archived', mode: 'delete', messageIds: ['m1'], labels: [] }),
      ).rejects.toMatchObject({ field: 'operation.mode' });
      expect(await store.loadHistory(id, { includeCompacted: true })).toStrictEqual(before);
      expect(await store.listOperations(id)).toMatchObject([{ id: operationId, status: 'planned', mode: 'overlay' }]);
      // A record that names no mode keeps the recorded one.
      await store.recordOperation({ id: operationId, conversationId: id, status: 'archived', messageIds: ['m1'], labels: ['b'] });
      expect(await store.listOperations(id)).toMatchObject([{ status: 'archived', mode: 'overlay' }]);
      // Another conversation's operation id is still refused as such.
      const foreign = await seed(1);
      await expect(
        store.commitCompaction({ conversationId: foreign, operationId, deleteIds: ['m1'], clipArchive: '[x]', labels: [], mode: 'overlay' }),
      ).rejects.toMatchObject({ field: 'commit.operationId' });
      expect(await store.loadHistory(foreign)).toMatchObject([{ id: 'm1' }]);
    });

    it('refuses a mode that is not delete or overlay, naming the field', async () => {
      const id = await seed(1);
      await expect(
        store.recordOperation({ id: newOperation(), conversationId: id, status: 'planned', mode: 'soft' as never, messageIds: [], labels: [] }),
      ).rejects.toMatchObject({ code: 'invalid_argument', field: 'operation.mode' });
      await expect(
        store.commitCompaction({ conversationId: id, operationId: newOperation(), deleteIds: ['m1'], clipArchive: '[x]', labels: [], mode: 'soft' as never }),
      ).rejects.toMatchObject({ code: 'invalid_argument', field: 'commit.mode' });
      await expect(store.loadHistory(id, { includeCompacted: 'yes' as never })).rejects.toMatchObject({ field: 'options.includeCompacted' });
      expect(await store.listOperations(id)).toEqual([]);
      expect(ids(await store.loadHistory(id))).toEqual(['m1']);
    });

    it('marks exist only while their operation is committed: recording it otherwise clears its own marks, no others', async () => {
      const id = await seed(4);
      const undone = await overlay(id, ['m1', 'm2']);
      const kept = await overlay(id, ['m3']);
      const [operation] = (await store.listOperations(id)).filter((o) => o.id === undone);
      await store.recordOperation({ ...operation!, status: 'rolled_back', error: 'undone' });
      expect((await store.loadHistory(id, { includeCompacted: true })).map((m) => [m.id, m.compactedBy])).toEqual([
        [`clip-archive-${id}`, undefined],
        ['m1', undefined],
        ['m2', undefined],
        ['m3', kept],
        ['m4', undefined],
      ]);
      expect(await store.countLive(id, ['m1', 'm2', 'm3'])).toBe(2);
    });

    it('is atomic inside transaction(): an error after an overlay commit leaves no mark', async () => {
      const id = await seed(3);
      const before = await store.loadHistory(id, { includeCompacted: true });
      await expect(
        store.transaction(async (tx) => {
          await tx.commitCompaction({ conversationId: id, operationId: newOperation(), deleteIds: ['m1'], clipArchive: '[x]', labels: [], mode: 'overlay' });
          expect(ids(await tx.loadHistory(id))).toEqual([`clip-archive-${id}`, 'm2', 'm3']);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(await store.loadHistory(id, { includeCompacted: true })).toStrictEqual(before);
    });

    if (backend.sql) {
      it('is atomic under a real database failure: a trigger refusing the clip-archive undoes the marks', async () => {
        const id = await seed(3);
        const before = await store.loadHistory(id, { includeCompacted: true });
        await exec(`create function memfold_test_refuse_overlay() returns trigger language plpgsql as $$
          begin raise exception 'injected clip-archive failure'; end $$`);
        await exec(`create trigger refuse_overlay_clip before insert on messages for each row
          when (new.conversation_id = '${id}' and new.kind = 'clip_archive') execute function memfold_test_refuse_overlay()`);
        try {
          await expect(
            store.commitCompaction({
              conversationId: id,
              operationId: newOperation(),
              deleteIds: ['m1', 'm2'],
              clipArchive: '[x]',
              labels: [],
              mode: 'overlay',
            }),
          ).rejects.toMatchObject({ code: 'persistence_error', message: expect.stringContaining('injected clip-archive failure') });
          expect(await store.loadHistory(id, { includeCompacted: true })).toStrictEqual(before);
          expect(await store.listOperations(id)).toEqual([]);
        } finally {
          await exec('drop trigger refuse_overlay_clip on messages');
          await exec('drop function memfold_test_refuse_overlay()');
        }
      });

      it('deleting the conversation row removes its overlay rows with the live ones (what an erase relies on)', async () => {
        const id = await seed(4);
        await overlay(id, ['m1', 'm2']);
        const other = await seed(2);
        await overlay(other, ['m1']);
        await exec(`delete from conversations where id = '${id}'`);
        expect(await store.loadHistory(id, { includeCompacted: true })).toEqual([]);
        expect(await store.findUsedIds(id, ['m1', 'm2', 'm3'])).toEqual([]);
        expect(ids(await store.loadHistory(other, { includeCompacted: true }))).toEqual([`clip-archive-${other}`, 'm1', 'm2']);
      });
    }
  });
}
