/**
 * `compaction.mode: 'overlay'` through createMemfold, on every live store (PGlite, PostgreSQL, in memory) with the
 * in-memory archive: compaction keeps the rows and marks them; history(), context(), usage and re-compaction see
 * exactly what delete mode shows; the full history stays readable; an interrupted overlay operation is finished by
 * marking (also by a process in delete mode) or undone without a mark left; switching modes between opens is safe.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import type { CompactionSettings } from '../../src/compaction/compaction-settings.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold, type Memfold, type MemfoldEvent } from '../../src/memfold.js';
import type { Archive } from '../../src/archive/archive.js';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { storeBackends } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { dialogue } from '../support/messages.js';
import { withFaults } from '../support/stack.js';

const settings: Partial<CompactionSettings> = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };

for (const backend of storeBackends()) {
  describe(`${backend.name}: overlay mode through createMemfold`, () => {
    let persistence: PersistenceProvider;
    let cleanup: () => Promise<void>;
    let archive: Archive;
    beforeAll(async () => {
      ({ persistence, cleanup } = await backend.open());
      archive = createInMemoryArchive({ embedder: createHashingEmbedder() });
    });
    afterAll(() => cleanup());

    /** A memfold on the shared store and archive, like another process opening them with these settings. */
    function open(
      mode: 'delete' | 'overlay',
      options: { persistence?: PersistenceProvider; archive?: Archive; onEvent?: (e: MemfoldEvent) => void } = {},
    ): Promise<Memfold> {
      return createMemfold({
        env: {},
        compaction: { ...settings, mode },
        tokens: createTokenCounter({ mode: 'chars4' }),
        persistence: options.persistence ?? persistence,
        archive: options.archive ?? archive,
        ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      });
    }

    async function seed(memfold: Memfold, id: string, turns: number): Promise<ConversationMessage[]> {
      return memfold.append(id, [{ role: 'system', content: 'You are terse.' }, ...dialogue(turns)]);
    }

    it('shows what delete mode shows, step for step, while keeping every row: history, context, usage, re-compaction, re-summarization', async () => {
      const overlay = await open('overlay');
      const deleting = await open('delete');
      // Same length ids, same messages: the two conversations plan, fold and re-summarize alike.
      const twins = [
        { memfold: overlay, id: 'twin-o', appended: [] as ConversationMessage[] },
        { memfold: deleting, id: 'twin-d', appended: [] as ConversationMessage[] },
      ];
      for (const twin of twins) twin.appended.push(...(await seed(twin.memfold, twin.id, 20)));
      let resummarized = 0;
      for (let step = 0; step < 2; step++) {
        const [o, d] = await Promise.all(twins.map(({ memfold, id }) => memfold.compact(id, { force: true })));
        expect(o!.status).toBe('compacted');
        expect({ archived: o!.archivedMessages, batches: o!.batches.length, resummarized: o!.resummarized.length, tokensAfter: o!.tokensAfter }).toEqual({
          archived: d!.archivedMessages,
          batches: d!.batches.length,
          resummarized: d!.resummarized.length,
          tokensAfter: d!.tokensAfter,
        });
        resummarized += o!.resummarized.length;
        const seqs = async ({ memfold, id }: (typeof twins)[number]) => (await memfold.history(id)).map((m) => [m.seq, m.role, m.kind]);
        expect(await seqs(twins[0]!)).toEqual(await seqs(twins[1]!));
        expect((await overlay.context('twin-o')).map((m) => m.seq)).toEqual((await deleting.context('twin-d')).map((m) => m.seq));
        expect((await overlay.usage('twin-o')).tokens).toBe((await deleting.usage('twin-d')).tokens);
        for (const twin of twins) {
          const report = await checkInvariants(twin.memfold, twin.id, twin.appended, { toolPairs: true });
          if (twin.id === 'twin-o') expect(report.overlaid).toBe(report.archived);
          else expect(report.overlaid).toBe(0);
        }
        for (const twin of twins) twin.appended.push(...(await twin.memfold.append(twin.id, dialogue(6, 100 + 6 * step))));
      }
      expect(resummarized, 'the run reached re-summarization').toBeGreaterThan(0);

      // The full history: every message ever appended, in order, the compacted ones marked by their operation.
      const full = await overlay.history('twin-o', { includeCompacted: true });
      expect(full[0]).toMatchObject({ role: 'system', content: 'You are terse.' });
      expect(full[1]!.kind).toBe('clip_archive');
      expect(
        full
          .slice(1)
          .filter((m) => m.kind !== 'clip_archive')
          .map((m) => m.id),
      ).toEqual(twins[0]!.appended.slice(1).map((m) => m.id));
      const operations = new Set((await persistence.listOperations('twin-o')).filter((op) => op.mode === 'overlay').map((op) => op.id));
      expect(full.filter((m) => m.compactedBy !== undefined).every((m) => operations.has(m.compactedBy!))).toBe(true);
      expect((await persistence.listConversations()).find((c) => c.id === 'twin-o')!.messageCount).toBe(
        (await persistence.listConversations()).find((c) => c.id === 'twin-d')!.messageCount,
      );
      // Delete mode keeps no such rows.
      expect((await deleting.history('twin-d', { includeCompacted: true })).map((m) => m.id)).toEqual((await deleting.history('twin-d')).map((m) => m.id));
    });

    it('an interrupted overlay operation is finished by marking, by a process opened in delete mode', async () => {
      const faults: { failUndo?: boolean } = {};
      // The commit fails and so does the undo: the operation stays pending, as a crash leaves it.
      const failingCommit: PersistenceProvider = {
        ...persistence,
        commitCompaction: async () => {
          throw new Error('injected commit failure');
        },
      };
      const crashed = await open('overlay', { persistence: failingCommit, archive: withFaults(archive, faults) });
      const appended = await seed(crashed, 'conv-r', 20);
      faults.failUndo = true;
      const result = await crashed.compact('conv-r');
      faults.failUndo = false;
      expect(result).toMatchObject({ status: 'failed', failureCode: 'commit_failed' });
      const [pending] = await persistence.listPendingOperations('conv-r');
      expect(pending).toMatchObject({ id: result.operationId, mode: 'overlay' });
      // The journal as a crash between the `archived` record and the commit leaves it (the record names no mode: it stays).
      await persistence.recordOperation({
        id: pending!.id,
        conversationId: 'conv-r',
        status: 'archived',
        messageIds: pending!.messageIds,
        labels: pending!.labels,
      });

      const events: MemfoldEvent[] = [];
      const reopened = await open('delete', { onEvent: (e) => events.push(e) });
      expect(events).toContainEqual(expect.objectContaining({ type: 'reconciled', operationId: pending!.id, action: 'committed' }));
      const full = await reopened.history('conv-r', { includeCompacted: true });
      expect(full.filter((m) => m.compactedBy === pending!.id).map((m) => m.id)).toEqual(pending!.messageIds);
      expect(full.filter((m) => m.kind !== 'clip_archive')).toHaveLength(appended.length);
      const report = await checkInvariants(reopened, 'conv-r', appended);
      expect(report.overlaid).toBe(pending!.messageIds.length);
    });

    it('a failed overlay compaction leaves no mark; one whose commit applied but reported failure is kept, as the journal says', async () => {
      const memfold = await open('overlay');
      const appended = await seed(memfold, 'conv-u', 20);
      const before = await memfold.history('conv-u', { includeCompacted: true });
      const refusing = await open('overlay', {
        persistence: {
          ...persistence,
          commitCompaction: async () => {
            throw new Error('injected commit failure');
          },
        },
      });
      expect(await refusing.compact('conv-u')).toMatchObject({ status: 'failed', failureCode: 'commit_failed' });
      expect(await memfold.history('conv-u', { includeCompacted: true })).toEqual(before);

      // The commit went through but its caller saw an error (a connection lost on COMMIT): the journal says it
      // committed, so the run keeps it (undoing would drop archive rows the marks point at) and reports it compacted.
      const lost = await open('overlay', {
        persistence: {
          ...persistence,
          async commitCompaction(commit) {
            await persistence.commitCompaction(commit);
            throw new Error('connection lost after commit');
          },
        },
      });
      const result = await lost.compact('conv-u');
      expect(result.status, result.error).toBe('compacted');
      expect(await persistence.listOperations('conv-u')).toContainEqual(expect.objectContaining({ id: result.operationId, status: 'committed' }));
      const kept = await memfold.history('conv-u', { includeCompacted: true });
      expect(kept.filter((m) => m.compactedBy === result.operationId)).toHaveLength(result.archivedMessages);
      await checkInvariants(memfold, 'conv-u', appended);
    });

    it('switching modes between opens: overlay rows stay marked under delete mode, which deletes only live rows, and back', async () => {
      const appended: ConversationMessage[] = [];
      const first = await open('overlay');
      appended.push(...(await seed(first, 'conv-s', 20)));
      expect((await first.compact('conv-s', { force: true })).status).toBe('compacted');
      const overlaid = (await first.history('conv-s', { includeCompacted: true })).filter((m) => m.compactedBy !== undefined);
      expect(overlaid.length).toBeGreaterThan(0);

      const second = await open('delete');
      expect(await second.history('conv-s')).toEqual(await first.history('conv-s'));
      appended.push(...(await second.append('conv-s', dialogue(12, 200))));
      const deleted = await second.compact('conv-s', { force: true });
      expect(deleted.status).toBe('compacted');
      const afterDelete = await second.history('conv-s', { includeCompacted: true });
      // The overlay rows are as they were; the rows the delete-mode compaction archived are gone.
      expect(afterDelete.filter((m) => m.compactedBy !== undefined)).toEqual(overlaid);
      expect(afterDelete.filter((m) => m.kind !== 'clip_archive')).toHaveLength(appended.length - deleted.archivedMessages);
      await checkInvariants(second, 'conv-s', appended);

      const third = await open('overlay');
      appended.push(...(await third.append('conv-s', dialogue(12, 300))));
      expect((await third.compact('conv-s', { force: true })).status).toBe('compacted');
      const report = await checkInvariants(third, 'conv-s', appended);
      expect(report.overlaid).toBeGreaterThan(overlaid.length);
      expect(report.live + report.archived).toBe(appended.length);
    });
  });
}
