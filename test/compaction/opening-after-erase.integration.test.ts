/**
 * keepFirstTurns after an erase that kept messages: appended while the erase ran, they start the conversation anew
 * (seq past the erase's boundary), so their first turn is the opening every compaction keeps verbatim, as in any
 * other conversation. The planner reads "the opening was archived" from a hole before the first live message once a
 * clip-archive exists; after such an erase the first live message follows the erased ones, and the second compaction
 * archived the opening the first one kept.
 * The clip-archive records where the opening starts (`openingSeq`), and the planner measures the hole from there.
 * On every store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { markedTurns } from '../manage/manage-fixtures.js';
import { storeBackends, type OpenedBackend } from '../support/backends.js';

const OPENING = 'the opening request: keep the crates of dock 3 in order';

/** Compact four times, appending four turns before each; whether the opening is live after each compaction. */
async function openingLiveAfterCompactions(memfold: Memfold, conversationId: string): Promise<boolean[]> {
  const live: boolean[] = [];
  for (let round = 0; round < 4; round++) {
    await memfold.append(conversationId, markedTurns(`round${round}`, 4, round * 4));
    const result = await memfold.compact(conversationId, { force: true });
    expect(result.status, result.error).toBe('compacted');
    live.push((await memfold.history(conversationId)).some((m) => m.content === OPENING));
  }
  return live;
}

for (const backend of storeBackends())
  describe(`${backend.name}: the opening turn after an erase that kept messages`, () => {
    let opened: OpenedBackend;
    beforeAll(async () => {
      opened = await backend.open();
    });
    afterAll(() => opened?.cleanup());

    it('stays verbatim through every compaction, as in a conversation never erased', async () => {
      const inner = createInMemoryArchive();
      let gate: (() => Promise<void>) | undefined;
      const archive: Archive = {
        ...inner,
        async eraseConversation(conversationId) {
          await gate?.();
          return inner.eraseConversation!(conversationId);
        },
      };
      const memfold = await createMemfold({ persistence: opened.persistence, archive, env: {}, compaction: { contextWindow: 4_096 } });
      try {
        const opening = [
          { role: 'user' as const, content: OPENING },
          { role: 'assistant' as const, content: 'understood' },
        ];
        await memfold.append('never-erased', opening);
        expect(await openingLiveAfterCompactions(memfold, 'never-erased')).toEqual([true, true, true, true]);

        await memfold.append('erased', markedTurns('erased', 3));
        let started!: () => void;
        let go!: () => void;
        const purgeStarted = new Promise<void>((resolve) => (started = resolve));
        const letGo = new Promise<void>((resolve) => (go = resolve));
        gate = () => {
          started();
          return letGo;
        };
        const erasing = memfold.eraseConversation('erased');
        await purgeStarted;
        await memfold.append('erased', opening);
        go();
        expect(await erasing).toMatchObject({ live: { messagesKept: 2 } });
        gate = undefined;
        expect(await openingLiveAfterCompactions(memfold, 'erased')).toEqual([true, true, true, true]);
      } finally {
        await memfold.close();
      }
    });
  });
