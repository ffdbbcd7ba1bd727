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
});
