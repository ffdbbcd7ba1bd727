/**
 * commitClearing (tier 2 of compaction) on every backend: in one transaction the listed tool results get their
 * placeholder text and label, keeping id, seq, role, call id, name and time, and the operation is recorded as a
 * committed clear_tool_outputs, and the token calibration is dropped; anything wrong with any listed row changes nothing
 * (a row an overlay compaction marked is not live). And the operation kind is kept.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, MemfoldError } from '../../src/errors.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { storeBackends } from '../support/backends.js';

for (const backend of storeBackends()) {
  describe(`${backend.name}: commitClearing`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    /** A user question, a call of two tools, both results, an answer. */
    async function seed(): Promise<string> {
      const id = `clear-${randomUUID()}`;
      await store.append(id, [
        { id: 'q', role: 'user', content: 'stock?' },
        {
          id: 'call',
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'c1', type: 'function', function: { name: 'inventory', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'prices', arguments: '{}' } },
          ],
        },
        { id: 'r1', role: 'tool', toolCallId: 'c1', name: 'inventory', content: 'SKU-1 stock 101 '.repeat(50) },
        { id: 'r2', role: 'tool', toolCallId: 'c2', name: 'prices', content: 'SKU-1 costs 9.99 '.repeat(50) },
        { id: 'a', role: 'assistant', content: '101 in stock' },
      ]);
      return id;
    }
    const operation = () => `op-${randomUUID()}`;

    it('replaces the text and sets the label of exactly the listed rows, keeps the rest of each row, and commits the operation', async () => {
      const id = await seed();
      const before = await store.loadHistory(id);
      const operationId = operation();
      await store.setTokenCalibration(id, { factor: 1.5, promptTokens: 150, estimatedTokens: 100 });
      await store.recordOperation({ id: operationId, conversationId: id, kind: 'clear_tool_outputs', status: 'archived', messageIds: ['r1'], labels: ['o-1'] });
      const updated = await store.commitClearing({
        conversationId: id,
        operationId,
        cleared: [{ id: 'r1', content: '[cleared: o-1]', label: 'o-1' }],
        labels: ['o-1'],
      });
      const after = await store.loadHistory(id);
      const r1 = before.find((m) => m.id === 'r1')!;
      expect(updated).toEqual([{ ...r1, content: '[cleared: o-1]', clearedOutputLabel: 'o-1' }]);
      expect(after).toEqual(before.map((m) => (m.id === 'r1' ? updated[0] : m)));
      expect(await store.listOperations(id)).toMatchObject([
        { id: operationId, kind: 'clear_tool_outputs', status: 'committed', messageIds: ['r1'], labels: ['o-1'] },
      ]);
      expect(await store.listPendingOperations(id)).toEqual([]);
      // The context the calibration was measured on changed: dropped with the commit, as a compaction drops it.
      expect(await store.getTokenCalibration(id)).toBeUndefined();
    });

    it('countLive with clearedOnly counts the live rows a clearing changed, so a stale copy can tell; a bad option is refused', async () => {
      const id = await seed();
      const ids = ['q', 'call', 'r1', 'r2', 'a'];
      expect(await store.countLive(id, ids, { clearedOnly: true })).toBe(0);
      await store.commitClearing({
        conversationId: id,
        operationId: operation(),
        cleared: [{ id: 'r2', content: '[cleared]', label: 'o-2' }],
        labels: ['o-2'],
      });
      expect(await store.countLive(id, ids)).toBe(5);
      expect(await store.countLive(id, ids, { clearedOnly: true })).toBe(1);
      expect(await store.countLive(id, ['r1'], { clearedOnly: true })).toBe(0);
      await expect(store.countLive(id, ids, { clearedOnly: 'yes' as never })).rejects.toMatchObject({ field: 'options.clearedOnly' });
    });

    it('countLiveAndCleared gives both counts of countLive in one lookup; ids not live count in neither', async () => {
      const id = await seed();
      const ids = ['q', 'call', 'r1', 'r2', 'a', 'never-appended'];
      expect(await store.countLiveAndCleared(id, ids)).toEqual({ live: 5, cleared: 0 });
      await store.commitClearing({
        conversationId: id,
        operationId: operation(),
        cleared: [{ id: 'r2', content: '[cleared]', label: 'o-2' }],
        labels: ['o-2'],
      });
      expect(await store.countLiveAndCleared(id, ids)).toEqual({ live: 5, cleared: 1 });
      await store.deleteByIds(id, ['r2', 'q']);
      expect(await store.countLiveAndCleared(id, ids)).toEqual({ live: 3, cleared: 0 });
      expect(await store.countLiveAndCleared(id, [])).toEqual({ live: 0, cleared: 0 });
      await expect(store.countLiveAndCleared(id, [7] as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it('refuses, changing nothing: a row that is not a live tool result, one already cleared, an id listed twice, another conversation operation', async () => {
      const id = await seed();
      const cleared = operation();
      await store.commitClearing({ conversationId: id, operationId: cleared, cleared: [{ id: 'r2', content: '[cleared]', label: 'o-2' }], labels: ['o-2'] });
      const before = await store.loadHistory(id);
      const refusals: Array<[Array<{ id: string; content: string; label: string }>, string]> = [
        [
          [
            { id: 'r1', content: 'x', label: 'o-1' },
            { id: 'q', content: 'x', label: 'o-q' },
          ],
          'commit.cleared[1].id',
        ],
        [
          [
            { id: 'r1', content: 'x', label: 'o-1' },
            { id: 'gone', content: 'x', label: 'o-g' },
          ],
          'commit.cleared[1].id',
        ],
        [
          [
            { id: 'r1', content: 'x', label: 'o-1' },
            { id: 'r2', content: 'x', label: 'o-2b' },
          ],
          'commit.cleared[1].id',
        ],
        [
          [
            { id: 'r1', content: 'x', label: 'o-1' },
            { id: 'r1', content: 'y', label: 'o-1b' },
          ],
          'commit.cleared[1].id',
        ],
        [[{ id: 'r1', content: 'x', label: '' }], 'commit.cleared[0].label'],
      ];
      for (const [list, field] of refusals) {
        const attempt = store.commitClearing({ conversationId: id, operationId: operation(), cleared: list, labels: [] });
        await expect(attempt, field).rejects.toSatisfy((e: unknown) => MemfoldError.isInstance(e) && e.details.field === field);
      }
      const foreign = await seed();
      const stolen = operation();
      await store.recordOperation({ id: stolen, conversationId: foreign, status: 'planned', messageIds: [], labels: [] });
      await expect(
        store.commitClearing({ conversationId: id, operationId: stolen, cleared: [{ id: 'r1', content: 'x', label: 'o-1' }], labels: [] }),
      ).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await store.loadHistory(id)).toEqual(before);
      expect((await store.listOperations(id)).map((op) => op.id)).toEqual([cleared]);
    });

    it('never takes a cleared label from append, and records operations as compactions unless told otherwise', async () => {
      const id = `clear-${randomUUID()}`;
      await store.append(id, [
        { id: 'q', role: 'user', content: 'hi' },
        { id: 'call', role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 't', arguments: '{}' } }] },
        { id: 'r1', role: 'tool', toolCallId: 'c1', content: 'out', clearedOutputLabel: 'o-forged' } as never,
      ]);
      expect((await store.loadHistory(id)).find((m) => m.id === 'r1')!.clearedOutputLabel).toBeUndefined();
      const operationId = operation();
      await store.recordOperation({ id: operationId, conversationId: id, status: 'planned', messageIds: ['q'], labels: [] });
      expect(await store.listOperations(id)).toMatchObject([{ id: operationId, kind: 'compaction' }]);
      await expect(
        store.recordOperation({ id: operation(), conversationId: id, kind: 'vacuum' as never, status: 'planned', messageIds: [], labels: [] }),
      ).rejects.toMatchObject({ field: 'operation.kind' });
    });
  });
}
