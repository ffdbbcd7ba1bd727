import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

const newConversation = () => `conv-${randomUUID()}`;
const newOperation = () => `op-${randomUUID()}`;

for (const backend of storeBackends()) {
  describe(`${backend.name}: commitCompaction, transactions, operations`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    let exec: (statement: string) => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup, exec } = await backend.open());
    });
    afterAll(() => cleanup());

    /** A conversation of `n` user messages m1..mn. */
    async function seed(n: number): Promise<string> {
      const id = newConversation();
      await store.append(
        id,
        Array.from({ length: n }, (_, i) => ({ id: `m${i + 1}`, role: 'user' as const, content: `text ${i + 1}` })),
      );
      return id;
    }

    it('deletes exactly deleteIds, stores the clip-archive first (seq 0) and marks the operation committed', async () => {
      const id = await seed(5);
      const other = await seed(2);
      const operationId = newOperation();
      await store.recordOperation({ id: operationId, conversationId: id, status: 'archived', messageIds: ['m1', 'm2', 'm3'], labels: [] });
      const report = await store.commitCompaction({
        conversationId: id,
        operationId,
        deleteIds: ['m1', 'm2', 'm3'],
        clipArchive: '[Context Summary v1]',
        labels: ['batch-a', 'batch-b'],
      });
      expect(report.deleted).toBe(3);
      expect(report.clipArchive).toMatchObject({ conversationId: id, seq: 0, role: 'system', kind: 'clip_archive', content: '[Context Summary v1]' });
      const history = await store.loadHistory(id);
      expect(history.map((m) => [m.seq, m.id])).toEqual([
        [0, report.clipArchive.id],
        [4, 'm4'],
        [5, 'm5'],
      ]);
      expect(history[0]).toStrictEqual(report.clipArchive);
      expect((await store.loadHistory(other)).map((m) => m.id)).toEqual(['m1', 'm2']);
      const [operation] = await store.listOperations(id);
      expect(operation).toMatchObject({ id: operationId, status: 'committed', labels: ['batch-a', 'batch-b'], messageIds: ['m1', 'm2', 'm3'] });
      expect(operation!.error).toBeUndefined();
    });

    it('with idsRecorded commits the recorded operation with its ids as stored, records one not yet recorded, and refuses a non-boolean', async () => {
      const id = await seed(5);
      const recorded = newOperation();
      await store.recordOperation({ id: recorded, conversationId: id, status: 'archived', messageIds: ['m1', 'm2'], labels: ['a'] });
      const commit = { conversationId: id, clipArchive: '[Context Summary v1]', idsRecorded: true };
      expect((await store.commitCompaction({ ...commit, operationId: recorded, deleteIds: ['m1', 'm2'], labels: ['a', 'b'] })).deleted).toBe(2);
      const fresh = newOperation();
      expect((await store.commitCompaction({ ...commit, operationId: fresh, deleteIds: ['m3'], labels: ['c'] })).deleted).toBe(1);
      expect((await store.listOperations(id)).map((o) => [o.id, o.status, o.messageIds, o.labels])).toEqual([
        [recorded, 'committed', ['m1', 'm2'], ['a', 'b']],
        [fresh, 'committed', ['m3'], ['c']],
      ]);
      // A recorded mode the commit does not name is refused as without the flag, changing nothing.
      const overlay = newOperation();
      await store.recordOperation({ id: overlay, conversationId: id, status: 'archived', mode: 'overlay', messageIds: ['m4'], labels: [] });
      await expect(store.commitCompaction({ ...commit, operationId: overlay, deleteIds: ['m4'], labels: [] })).rejects.toMatchObject({ field: 'commit.mode' });
      await expect(
        store.commitCompaction({ ...commit, operationId: newOperation(), deleteIds: ['m5'], labels: [], idsRecorded: 'yes' as never }),
      ).rejects.toMatchObject({
        field: 'commit.idsRecorded',
      });
      expect((await store.loadHistory(id)).map((m) => m.id).slice(1)).toEqual(['m4', 'm5']);
    });

    it('replaces the previous clip-archive instead of adding a second one', async () => {
      const id = await seed(4);
      const first = await store.commitCompaction({
        conversationId: id,
        operationId: newOperation(),
        deleteIds: ['m1'],
        clipArchive: '[Context Summary v1]',
        labels: [],
      });
      const second = await store.commitCompaction({
        conversationId: id,
        operationId: newOperation(),
        deleteIds: ['m2'],
        clipArchive: '[Context Summary v2]',
        labels: [],
      });
      expect(Date.parse(second.clipArchive.createdAt)).toBeGreaterThanOrEqual(Date.parse(first.clipArchive.createdAt));
      const history = await store.loadHistory(id);
      expect(history.filter((m) => m.kind === 'clip_archive').map((m) => m.content)).toEqual(['[Context Summary v2]']);
      expect(history.map((m) => m.seq)).toEqual([0, 3, 4]);
    });

    it('creates the operation row when none was recorded', async () => {
      const id = await seed(1);
      const operationId = newOperation();
      await store.commitCompaction({ conversationId: id, operationId, deleteIds: ['m1'], clipArchive: '[Context Summary]', labels: ['l'] });
      expect(await store.listOperations(id)).toEqual([
        {
          id: operationId,
          conversationId: id,
          kind: 'compaction',
          status: 'committed',
          mode: 'delete',
          messageIds: ['m1'],
          labels: ['l'],
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
      ]);
    });

    it('is atomic: an operation id owned by another conversation changes nothing', async () => {
      const id = await seed(3);
      await store.commitCompaction({ conversationId: id, operationId: newOperation(), deleteIds: [], clipArchive: '[Context Summary old]', labels: [] });
      const before = await store.loadHistory(id);
      const foreign = await seed(1);
      const stolen = newOperation();
      await store.recordOperation({ id: stolen, conversationId: foreign, status: 'planned', messageIds: [], labels: [] });
      const attempt = store.commitCompaction({
        conversationId: id,
        operationId: stolen,
        deleteIds: ['m1', 'm2'],
        clipArchive: '[Context Summary new]',
        labels: ['x'],
      });
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ field: 'commit.operationId' });
      expect(await store.loadHistory(id)).toStrictEqual(before);
      expect(await store.listOperations(foreign)).toMatchObject([{ id: stolen, status: 'planned', labels: [] }]);
    });

    it('countLive counts only live ids of that conversation', async () => {
      const id = await seed(3);
      const other = await seed(2);
      expect(await store.countLive(id, ['m1', 'm2', 'missing'])).toBe(2);
      await store.deleteByIds(id, ['m1']);
      expect(await store.countLive(id, ['m1', 'm2', 'm3'])).toBe(2);
      expect(await store.countLive(other, ['m3'])).toBe(0);
      expect(await store.countLive(id, [])).toBe(0);
    });

    it('updateOperation moves status and labels on and keeps the message ids; an unknown or foreign id is refused', async () => {
      const id = await seed(2);
      const operationId = newOperation();
      await store.recordOperation({ id: operationId, conversationId: id, status: 'planned', messageIds: ['m1', 'm2'], labels: [] });
      await store.updateOperation({ id: operationId, conversationId: id, status: 'archived', labels: ['batch-a', 'transcript-a'] });
      expect(await store.listOperations(id)).toMatchObject([
        { id: operationId, status: 'archived', messageIds: ['m1', 'm2'], labels: ['batch-a', 'transcript-a'] },
      ]);
      const foreign = await seed(1);
      await expect(store.updateOperation({ id: operationId, conversationId: foreign, status: 'committed', labels: [] })).rejects.toMatchObject({
        field: 'operation.id',
      });
      await expect(store.updateOperation({ id: 'no-such-op', conversationId: id, status: 'planned', labels: [] })).rejects.toMatchObject({
        field: 'operation.id',
      });
      await expect(store.updateOperation({ id: operationId, conversationId: id, status: 'done' as never, labels: [] })).rejects.toMatchObject({
        field: 'operation.status',
      });
      expect(await store.listOperations(id)).toMatchObject([{ status: 'archived', labels: ['batch-a', 'transcript-a'] }]);
    });

    // A failure inside the commit is provoked with a trigger, which only a SQL backend has.
    if (backend.sql) {
      it('is atomic under a real database failure: a trigger refusing the clip-archive undoes the deletes', async () => {
        const id = await seed(3);
        const before = await store.loadHistory(id);
        await exec(`create function memfold_test_refuse() returns trigger language plpgsql as $$
          begin raise exception 'injected clip-archive failure'; end $$`);
        await exec(`create trigger refuse_clip before insert on messages for each row
          when (new.conversation_id = '${id}' and new.kind = 'clip_archive') execute function memfold_test_refuse()`);
        try {
          const attempt = store.commitCompaction({
            conversationId: id,
            operationId: newOperation(),
            deleteIds: ['m1', 'm2'],
            clipArchive: '[Context Summary]',
            labels: [],
          });
          await expect(attempt).rejects.toMatchObject({ code: 'persistence_error', message: expect.stringContaining('injected clip-archive failure') });
          expect(await store.loadHistory(id)).toStrictEqual(before);
          expect(await store.listOperations(id)).toEqual([]);
        } finally {
          await exec('drop trigger refuse_clip on messages');
          await exec('drop function memfold_test_refuse()');
        }
      });
    }

    it('is atomic inside transaction(): an error after commitCompaction rolls the whole commit back', async () => {
      const id = await seed(3);
      const before = await store.loadHistory(id);
      const boom = new Error('boom after commit');
      await expect(
        store.transaction(async (tx) => {
          const report = await tx.commitCompaction({
            conversationId: id,
            operationId: newOperation(),
            deleteIds: ['m1', 'm2'],
            clipArchive: '[Context Summary]',
            labels: [],
          });
          expect(report.deleted).toBe(2);
          // Inside the transaction the commit is visible...
          expect((await tx.loadHistory(id)).map((m) => m.seq)).toEqual([0, 3]);
          throw boom;
        }),
      ).rejects.toBe(boom);
      // ...and after the rollback it is gone.
      expect(await store.loadHistory(id)).toStrictEqual(before);
      expect(await store.listOperations(id)).toEqual([]);
    });

    it('transaction() commits everything fn wrote and returns its value', async () => {
      const id = await seed(2);
      const value = await store.transaction(async (tx) => {
        await tx.append(id, [{ id: 'm3', role: 'user', content: 'text 3' }]);
        await tx.deleteByIds(id, ['m1']);
        return 'done';
      });
      expect(value).toBe('done');
      expect((await store.loadHistory(id)).map((m) => [m.id, m.seq])).toEqual([
        ['m2', 2],
        ['m3', 3],
      ]);
    });

    it('transaction() rolls back appends and deletes when fn throws, and the seq counter too', async () => {
      const id = await seed(2);
      await expect(
        store.transaction(async (tx) => {
          await tx.append(id, [{ role: 'user', content: 'lost' }]);
          await tx.deleteByIds(id, ['m1', 'm2']);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect((await store.loadHistory(id)).map((m) => m.id)).toEqual(['m1', 'm2']);
      const [next] = await store.append(id, [{ role: 'user', content: 'next' }]);
      expect(next!.seq).toBe(3);
    });

    // PGlite has one connection and the in-memory store one transaction at a time: a store call inside would wait for itself.
    if (backend.name !== 'postgres') {
      it('refuses store calls inside transaction() instead of deadlocking', async () => {
        await expect(store.transaction(() => store.loadHistory('x'))).rejects.toThrow(/use the tx argument/);
        // The store still works afterwards.
        expect(await store.loadHistory(newConversation())).toEqual([]);
      });
    }

    it('records operations: upsert keeps createdAt, updates status, ids, labels and error', async () => {
      const id = newConversation();
      const operationId = newOperation();
      await store.recordOperation({ id: operationId, conversationId: id, status: 'planned', messageIds: ['a', 'b'], labels: [] });
      const [planned] = await store.listOperations(id);
      await store.recordOperation({
        id: operationId,
        conversationId: id,
        status: 'rolled_back',
        messageIds: ['a'],
        labels: ['l1'],
        error: 'archive write failed',
      });
      const [rolledBack, ...rest] = await store.listOperations(id);
      expect(rest).toEqual([]);
      expect(rolledBack).toEqual({
        ...planned,
        status: 'rolled_back',
        messageIds: ['a'],
        labels: ['l1'],
        error: 'archive write failed',
        updatedAt: expect.any(String),
      });
      expect(Date.parse(rolledBack!.updatedAt)).toBeGreaterThanOrEqual(Date.parse(planned!.createdAt));
      await expect(store.recordOperation({ id: operationId, conversationId: id, status: 'done' as never, messageIds: [], labels: [] })).rejects.toMatchObject({
        code: 'invalid_argument',
        field: 'operation.status',
      });
    });

    it('lists operations oldest first, only for that conversation', async () => {
      const id = newConversation();
      const ids = [newOperation(), newOperation(), newOperation()];
      for (const operationId of ids) {
        await store.recordOperation({ id: operationId, conversationId: id, status: 'planned', messageIds: [], labels: [] });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await store.recordOperation({ id: newOperation(), conversationId: newConversation(), status: 'planned', messageIds: [], labels: [] });
      expect((await store.listOperations(id)).map((o) => o.id)).toEqual(ids);
    });
  });
}
