/**
 * The continuation note: after a compaction, with `continuationMessage` set, context() ends with a system note until
 * the next user message; off by default; a re-summarization does not bring it back; compactHistory takes a context
 * that holds it. Run on every store (the commit records where the compaction stood on the clip-archive row).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTINUATION_MESSAGE } from '../../src/compaction/view/context-view.js';
import { InvalidConfigError } from '../../src/errors.js';
import { createMemfold, type MemfoldOptions } from '../../src/memfold.js';
import { persistenceBackends } from '../support/backends.js';
import { orderChat } from '../support/messages.js';

type Open = (compaction: MemfoldOptions['compaction']) => Promise<{ memfold: Awaited<ReturnType<typeof createMemfold>>; dispose(): Promise<void> }>;

const stores: Array<{ name: string; open: Open }> = [
  {
    name: 'memory',
    open: async (compaction) => {
      const memfold = await createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 2_000, ...compaction } });
      return { memfold, dispose: () => memfold.close() };
    },
  },
  ...persistenceBackends().map((backend) => ({
    name: backend.name,
    open: (async (compaction) => {
      const { persistence, cleanup } = await backend.open();
      const lance = await mkdtemp(path.join(os.tmpdir(), 'memfold-continuation-'));
      const memfold = await createMemfold({ persistence, env: {}, config: { lancedbUri: lance }, compaction: { contextWindow: 2_000, ...compaction } });
      return {
        memfold,
        async dispose() {
          await memfold.close();
          await cleanup();
          await rm(lance, { recursive: true, force: true });
        },
      };
    }) satisfies Open,
  })),
];

const last = <T>(items: readonly T[]) => items[items.length - 1]!;

for (const { name, open } of stores) {
  describe(`${name}: continuation note`, () => {
    it('is off by default', async () => {
      const { memfold, dispose } = await open({});
      await memfold.append('c', orderChat(20));
      expect((await memfold.compact('c', { force: true })).status).toBe('compacted');
      expect((await memfold.context('c')).some((m) => m.kind === 'continuation')).toBe(false);
      await dispose();
    });

    it('ends the context after a compaction, stays through assistant and tool turns, and leaves with the next user message', async () => {
      const { memfold, dispose } = await open({ continuationMessage: true });
      await memfold.append('c', orderChat(20));
      expect((await memfold.context('c')).some((m) => m.kind === 'continuation')).toBe(false);
      expect((await memfold.compact('c', { force: true })).status).toBe('compacted');

      const after = await memfold.context('c');
      expect(last(after)).toMatchObject({ role: 'system', kind: 'continuation', content: DEFAULT_CONTINUATION_MESSAGE });
      // Not a row: history() does not hold it, and the prompt before it is the history as context() shows it.
      expect((await memfold.history('c')).some((m) => m.kind === 'continuation')).toBe(false);
      expect(after.slice(0, -1).map((m) => m.id)).toEqual((await memfold.history('c')).map((m) => m.id));

      await memfold.append('c', [{ role: 'assistant', content: 'Looking up ORD-503 again.' }]);
      expect(last(await memfold.context('c')).kind).toBe('continuation');
      await memfold.append('c', [{ role: 'user', content: 'Thanks. What about ORD-504?' }]);
      const next = await memfold.context('c');
      expect(next.some((m) => m.kind === 'continuation')).toBe(false);
      expect(last(next).content).toBe('Thanks. What about ORD-504?');

      // compactHistory takes a context holding the note (it is left out), and a compaction brings the note back.
      await memfold.append('c', orderChat(10, 40));
      const withNote = [...(await memfold.context('c'))];
      const compacted = await memfold.compactor.compactHistory(withNote, 'c', { force: true });
      expect(compacted.status).toBe('compacted');
      expect(last(await memfold.context('c')).kind).toBe('continuation');
      await dispose();
    });

    it('says your text; a re-summarization after the next user message does not bring it back', async () => {
      const text = 'History compacted. Use memory_read for details; carry on.';
      const { memfold, dispose } = await open({ continuationMessage: text, clipFirst: 1, clipLast: 1, clipBuffer: 8 });
      for (let round = 0; round < 3; round++) {
        await memfold.append('c', orderChat(12, round * 12));
        expect((await memfold.compact('c', { force: true })).status).toBe('compacted');
      }
      expect(last(await memfold.context('c')).content).toBe(text);
      await memfold.append('c', [{ role: 'user', content: 'And now?' }]);
      const frontier = await memfold.compactor.frontier('c');
      expect(frontier.filter((b) => b.depth === 0).length).toBeGreaterThan(1);
      await memfold.compactor.resummarizeDepth('c', 0);
      expect((await memfold.context('c')).some((m) => m.kind === 'continuation')).toBe(false);
      await dispose();
    });
  });
}

describe('continuationMessage setting', () => {
  it('is refused when neither a boolean nor a non-empty text, naming the field; configure turns it on at run time', async () => {
    await expect(createMemfold({ store: 'memory', env: {}, compaction: { continuationMessage: ' ' } })).rejects.toThrow(
      /compaction\.continuationMessage: must be true, false or a non-empty text/,
    );
    await expect(createMemfold({ store: 'memory', env: {}, compaction: { continuationMessage: 1 as unknown as boolean } })).rejects.toThrow(InvalidConfigError);
    const memfold = await createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 2_000 } });
    await memfold.append('c', orderChat(20));
    await memfold.compact('c', { force: true });
    expect((await memfold.context('c')).some((m) => m.kind === 'continuation')).toBe(false);
    memfold.configure({ continuationMessage: true }, { conversationId: 'c' });
    expect(last(await memfold.context('c')).kind).toBe('continuation');
    await memfold.close();
  });
});
