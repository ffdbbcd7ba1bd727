/**
 * A compaction chooses its archive labels under the conversation's lock, looking them up once; when none was taken, its
 * writes tell the archive so (`WriteOptions.labelsFree`) and the archive appends them without a second lookup (which
 * cost 7-25 ms on LanceDB after the last summary). A label found taken gets a longer form that was not looked up
 * itself: then every write has its labels looked up again.
 */
import { describe, expect, it } from 'vitest';
import type { Archive, WriteOptions } from '../../src/archive/archive.js';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { createCompactor } from '../../src/compaction/compactor.js';
import type { NewMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { tripChat } from '../support/messages.js';
import { recordingArchive, writesOf, type ArchiveCall } from '../support/recording-archive.js';

/**
 * The options of the compaction's own writes: tier 2's and tier 3's. Re-summarization looks each parent's label up
 * itself when it makes it (`resummarize-writes.test.ts`).
 */
function ownWriteOptions(calls: readonly ArchiveCall[]): Array<WriteOptions | undefined> {
  return writesOf(calls)
    .filter((c) => !c.entries.every((e) => e.kind === 'summary' && e.depth > 0))
    .map((c) => c.options);
}

async function compactOnce(archive: Archive) {
  const persistence = createInMemoryPersistence();
  const compactor = createCompactor({
    summarizer: createExtractiveSummarizer(),
    archive,
    persistence,
    tokens: createTokenCounter(),
    settings: { contextWindow: 4_000, chunkTokens: 600 },
  });
  await persistence.append('trip', tripChat(40));
  return compactor.compactStored('trip', { force: true });
}

const at = (minute: number) => new Date(Date.UTC(2024, 4, 2, 9, minute)).toISOString();

/** Turns that each look an order up: long tool outputs, which tier 2 clears before tier 3 summarizes. */
function orderLookups(turns: number): NewMessage[] {
  return Array.from({ length: turns }, (_, t) => {
    const call = { id: `call_${t}`, type: 'function' as const, function: { name: 'get_order', arguments: JSON.stringify({ order_id: `ORD-${t}` }) } };
    return [
      { role: 'user' as const, content: `Where is order ORD-${t}? ${'I need it before the weekend. '.repeat(3)}`, createdAt: at(4 * t) },
      { role: 'assistant' as const, content: '', toolCalls: [call], createdAt: at(4 * t + 1) },
      { role: 'tool' as const, toolCallId: call.id, content: `ORD-${t}: ${'shipped with DHL, item list follows. '.repeat(12)}`, createdAt: at(4 * t + 2) },
      { role: 'assistant' as const, content: `Order ORD-${t} arrives on Friday.`, createdAt: at(4 * t + 3) },
    ];
  }).flat();
}

describe("a compaction's archive writes", () => {
  it("include tier 2's write of the outputs it clears", async () => {
    const calls: ArchiveCall[] = [];
    const persistence = createInMemoryPersistence();
    const compactor = createCompactor({
      summarizer: createExtractiveSummarizer(),
      archive: recordingArchive(createInMemoryArchive({ embedder: createHashingEmbedder() }), calls),
      persistence,
      tokens: createTokenCounter(),
      settings: { contextWindow: 4_000, chunkTokens: 600, keepToolUses: 2 },
    });
    await persistence.append('orders', orderLookups(30));
    const result = await compactor.compactStored('orders', { force: true });
    expect(result.status, result.error).toBe('compacted');
    expect(result.toolOutputsCleared).toBeGreaterThan(0);
    // Tier 2's write of the cleared outputs comes first, then tier 3's.
    const writes = ownWriteOptions(calls);
    expect(writes.length).toBeGreaterThanOrEqual(3);
    expect(writes.slice(0, 3)).toEqual([{ labelsFree: true }, { labelsFree: true }, { labelsFree: true }]);
  });

  it('tell the archive their labels are free when the lookup under the lock found none taken', async () => {
    const calls: ArchiveCall[] = [];
    const result = await compactOnce(recordingArchive(createInMemoryArchive({ embedder: createHashingEmbedder() }), calls));
    expect(result.status).toBe('compacted');
    // The transcript segments, then the depth-0 batches; re-summarization's batches are another step's.
    const writes = ownWriteOptions(calls);
    expect(writes.length).toBeGreaterThanOrEqual(2);
    expect(writes.slice(0, 2)).toEqual([{ labelsFree: true }, { labelsFree: true }]);
  });

  it('have every label looked up when one was taken and made longer', async () => {
    const inner = createInMemoryArchive({ embedder: createHashingEmbedder() });
    // Learn the labels a compaction of this history chooses, then plant another operation's row under one of them.
    const learned = createInMemoryArchive({ embedder: createHashingEmbedder() });
    expect((await compactOnce(learned)).status).toBe('compacted');
    const [taken] = await learned.list({ conversationId: 'trip', kind: 'summary' });
    await inner.write([{ ...taken!, operationId: 'another-operation' }]);

    const calls: ArchiveCall[] = [];
    const result = await compactOnce(recordingArchive(inner, calls));
    expect(result.status).toBe('compacted');
    expect(result.batches.map((b) => b.label)).not.toContain(taken!.label);
    const writes = ownWriteOptions(calls);
    expect(writes.length).toBeGreaterThanOrEqual(2);
    for (const options of writes) expect(options?.labelsFree).not.toBe(true);
    expect((await inner.read('trip', [taken!.label]))[0]?.operationId).toBe('another-operation');
  });
});
