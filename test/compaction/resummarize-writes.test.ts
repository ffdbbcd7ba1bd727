/**
 * Re-summarization folds every run it picks first, then writes the parents in one archive write (read back as one)
 * and marks every run under its parent in one call: one LanceDB write and update for the step instead of one of each
 * per run, none of them between two model calls. A parent is still written and read back before its children are
 * marked, and a label is never given twice, even to parents not yet written.
 */
import { describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { createCompactor } from '../../src/compaction/compactor.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { tripChat } from '../support/messages.js';
import { recordingArchive, writesOf, type ArchiveCall } from '../support/recording-archive.js';

async function compactLongChat(inner: Archive = createInMemoryArchive({ embedder: createHashingEmbedder() })) {
  const calls: ArchiveCall[] = [];
  const persistence = createInMemoryPersistence();
  const compactor = createCompactor({
    summarizer: createExtractiveSummarizer(),
    archive: recordingArchive(inner, calls),
    persistence,
    tokens: createTokenCounter(),
    settings: { contextWindow: 4_000, chunkTokens: 600, clipFirst: 1, clipLast: 1, clipBuffer: 0 },
  });
  await persistence.append('trip', tripChat(400));
  const result = await compactor.compactStored('trip', { force: true });
  return { result, calls, inner };
}

describe('re-summarization', () => {
  it('writes the parents of every run it folds in one write, then marks the runs in one call', async () => {
    const { result, calls, inner } = await compactLongChat();
    expect(result.status, result.error).toBe('compacted');
    expect(result.resummarized.length).toBeGreaterThanOrEqual(3);
    const parents = new Set(result.resummarized.map((b) => b.label));
    const parentWrites = writesOf(calls).filter((c) => c.entries.some((e) => parents.has(e.label)));
    // The first run may be folded beside the fold (its own write); every other parent is written in one write.
    expect(parentWrites.length).toBeLessThanOrEqual(2);
    expect(new Set(parentWrites.flatMap((c) => c.entries.map((e) => e.label)))).toEqual(parents);
    // No single-run mark; each markEach comes after the write of every parent it marks under.
    expect(calls.filter((c) => c.call === 'mark')).toHaveLength(0);
    const parentOf = new Map(result.resummarized.flatMap((p) => p.sourceIds.map((child) => [child, p.label] as const)));
    const writtenAt = new Map(parentWrites.flatMap((c) => c.entries.map((e) => [e.label, calls.indexOf(c)] as const)));
    const marks = calls.filter((c): c is Extract<ArchiveCall, { call: 'markEach' }> => c.call === 'markEach' && c.labels.some((l) => parentOf.has(l)));
    expect(marks.length).toBeLessThanOrEqual(2);
    for (const mark of marks) for (const label of mark.labels) expect(writtenAt.get(parentOf.get(label)!)).toBeLessThan(calls.indexOf(mark));

    // Every child is marked under the parent that lists it, parents of parents included.
    const stored = await inner.list({ conversationId: 'trip', kind: 'summary' });
    const byLabel = new Map(stored.map((e) => [e.label, e]));
    for (const parent of result.resummarized) {
      expect(byLabel.get(parent.label)?.content).toBe(parent.content);
      for (const child of parent.sourceIds) expect(byLabel.get(child)?.parentLabel).toBe(parent.label);
    }
    expect(new Set(result.resummarized.map((b) => b.label)).size).toBe(result.resummarized.length);
  });

  it("tells the archive the parents' labels are free only when each lookup found its label free", async () => {
    const { result, calls } = await compactLongChat();
    const parents = new Set(result.resummarized.map((b) => b.label));
    const parentWrites = writesOf(calls).filter((c) => c.entries.some((e) => parents.has(e.label)));
    for (const write of parentWrites) expect(write.options).toEqual({ labelsFree: true });

    // Another operation's row under the label the last parent would take: that parent gets a longer label, and the
    // write holding it has its labels looked up again, leaving the other row as it was.
    const learned = result.resummarized.at(-1)!;
    const inner = createInMemoryArchive({ embedder: createHashingEmbedder() });
    // Marked under a parent of its own, it is no batch of the frontier this compaction folds.
    await inner.write([{ ...learned, operationId: 'another-operation', parentLabel: 'another-parent' }]);
    const again = await compactLongChat(inner);
    expect(again.result.status, again.result.error).toBe('compacted');
    expect(again.result.resummarized.map((b) => b.label)).not.toContain(learned.label);
    const lengthened = writesOf(again.calls).filter((c) => c.entries.some((e) => e.depth === learned.depth && e.end === learned.end));
    expect(lengthened.length).toBeGreaterThan(0);
    for (const write of lengthened) expect(write.options?.labelsFree).not.toBe(true);
    expect((await inner.read('trip', [learned.label]))[0]?.operationId).toBe('another-operation');
  });
});
