/**
 * A commit that reports an error after it landed (its acknowledgement lost, as when a connection drops on COMMIT):
 * the run must not undo an operation the journal says committed, or the archive would lose the only copy of
 * messages the live table no longer holds.
 */
import { describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold } from '../../src/memfold.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { checkInvariants } from '../support/invariants.js';
import { dialogue } from '../support/messages.js';

async function open(faults: { journalUnreadable?: boolean }) {
  const persistence = createInMemoryPersistence();
  const lostAck: PersistenceProvider = {
    ...persistence,
    async commitCompaction(commit) {
      await persistence.commitCompaction(commit);
      throw new Error('connection lost after COMMIT');
    },
    async listOperations(conversationId) {
      if (faults.journalUnreadable) throw new Error('connection lost');
      return persistence.listOperations(conversationId);
    },
  };
  const archive = createInMemoryArchive({ embedder: createHashingEmbedder() });
  const memfold = await createMemfold({ env: {}, persistence: lostAck, archive, compaction: { contextWindow: 2_000 } });
  return { memfold, persistence, archive };
}

describe('a commit whose acknowledgement is lost', () => {
  it('is reported compacted from the live rows, and nothing it archived is undone', async () => {
    const { memfold, persistence } = await open({});
    const appended = await memfold.append('lost', dialogue(30));
    const result = await memfold.compact('lost');
    expect(result.status, result.error).toBe('compacted');
    expect(await persistence.listOperations('lost')).toContainEqual(expect.objectContaining({ id: result.operationId, status: 'committed' }));
    expect(result.history.map((m) => m.id)).toEqual((await memfold.context('lost')).map((m) => m.id));
    expect(result.archivedMessages).toBeGreaterThan(0);
    await checkInvariants(memfold, 'lost', appended);
  });

  it('when the journal cannot say whether it landed either, fails and undoes nothing; reconcile settles it', async () => {
    const faults = { journalUnreadable: true };
    const { memfold } = await open(faults);
    const appended = await memfold.append('unknown', dialogue(30));
    const result = await memfold.compact('unknown');
    expect(result).toMatchObject({ status: 'failed', failureCode: 'commit_failed' });
    expect(result.error).toMatch(/nothing was undone/);
    faults.journalUnreadable = false;
    await memfold.reconcile('unknown');
    await checkInvariants(memfold, 'unknown', appended);
  });
});
