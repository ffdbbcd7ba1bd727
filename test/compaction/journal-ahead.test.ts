/**
 * A compaction journals its chunks' labels once, before its first archive write: the batch writes that follow need
 * no journal update of their own, and every label is on the journal before its write starts.
 */
import { describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createCompactor } from '../../src/compaction/compactor.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { dialogue } from '../support/messages.js';

// A clip buffer wide enough that nothing is re-summarized: those writes' labels are not known ahead.
const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300, clipBuffer: 50 };

/** The extractive summarizer, answering on a later turn of the event loop: each batch's summary arrives on its own. */
function slowSummarizer(): Summarizer {
  const inner = createExtractiveSummarizer();
  return {
    ...inner,
    summarize: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return inner.summarize(request);
    },
  };
}

describe('journal ahead of the archive writes', () => {
  it('journals once before the writes, every label before its write, and once more when archived', async () => {
    const stored = createInMemoryPersistence();
    let journalUpdates = 0;
    const persistence: PersistenceProvider = {
      ...stored,
      updateOperation: (update) => {
        journalUpdates++;
        return stored.updateOperation(update);
      },
    };
    const memory = createInMemoryArchive({ embedder: createHashingEmbedder() });
    const unjournaled: string[] = [];
    let writes = 0;
    const archive: Archive = {
      ...memory,
      write: async (entries) => {
        writes++;
        const [operation] = await stored.listPendingOperations('long');
        const journaled = new Set(operation?.labels ?? []);
        unjournaled.push(...entries.map((e) => e.label).filter((label) => !journaled.has(label)));
        return memory.write(entries);
      },
    };
    const compactor = createCompactor({ summarizer: slowSummarizer(), archive, persistence, tokens: createTokenCounter(), settings });
    await persistence.append('long', [{ role: 'system', content: 'You are terse.' }, ...dialogue(24)]);
    const result = await compactor.compactHistory(await persistence.loadHistory('long'), 'long');
    expect(result.status).toBe('compacted');
    expect(result.resummarized).toEqual([]);
    // The transcript, then each batch as its summary arrives.
    expect(writes).toBeGreaterThanOrEqual(3);
    expect(unjournaled).toEqual([]);
    // Ahead of the writes, then `archived` (the commit records the operation itself).
    expect(journalUpdates).toBe(2);
  });

  it('records the operation archived in turn with its writes: a re-summarized batch written meanwhile stays on the journal', async () => {
    const stored = createInMemoryPersistence();
    let archivedStarted!: () => void;
    const archivedCalled = new Promise<void>((resolve) => (archivedStarted = resolve));
    let nextUpdate: (() => void) | undefined;
    const written: string[] = [];
    const unjournaled: string[] = [];
    const persistence: PersistenceProvider = {
      ...stored,
      updateOperation: async (update) => {
        nextUpdate?.();
        if (update.status === 'archived' && nextUpdate === undefined) {
          // The `archived` record is slow to land: any journal update made meanwhile lands first.
          const overtaken = new Promise<void>((resolve) => (nextUpdate = resolve));
          archivedStarted();
          await Promise.race([overtaken, new Promise((resolve) => setTimeout(resolve, 200))]);
        }
        await stored.updateOperation(update);
        // A crash from here on finds only these labels: every row written so far must be among them.
        const journaled = new Set(update.labels ?? []);
        unjournaled.push(...written.filter((label) => !journaled.has(label)));
      },
    };
    const inner = createExtractiveSummarizer();
    // The first re-summarization answers once the operation is being recorded archived: its write comes meanwhile.
    const summarizer: Summarizer = {
      ...inner,
      summarize: async (request) => {
        if (request.purpose === 'resummarize') await archivedCalled;
        return inner.summarize(request);
      },
    };
    const memory = createInMemoryArchive({ embedder: createHashingEmbedder() });
    const archive: Archive = {
      ...memory,
      write: async (entries) => {
        written.push(...entries.map((e) => e.label));
        return memory.write(entries);
      },
    };
    const compactor = createCompactor({ summarizer, archive, persistence, tokens: createTokenCounter(), settings: { ...settings, clipBuffer: 0 } });
    await stored.append('long', [{ role: 'system', content: 'You are terse.' }, ...dialogue(24)]);
    const result = await compactor.compactHistory(await stored.loadHistory('long'), 'long');
    expect(result.status).toBe('compacted');
    expect(result.resummarized.length).toBeGreaterThan(0);
    // A crash at any moment must find every row the operation wrote on its journal, or reconcile leaves it behind.
    expect(unjournaled).toEqual([]);
  });
});
