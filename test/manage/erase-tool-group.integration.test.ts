/**
 * An erase never splits a tool group: the result of a call the erase removed goes with it, also when the agent
 * appended it while the erase ran (or between a failed erase and the reconcile that finishes it). Kept alone, it
 * would answer a call that no longer exists: the model's context would open with it, and every later compaction of
 * the conversation would fail on it. On every store, with a real LanceDB folder.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { NewMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { storeBackends, type OpenedBackend } from '../support/backends.js';
import { markedTurns, uniqueWord } from './manage-fixtures.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'memfold-erase-tool-group-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A real LanceDB archive whose next purge waits until the test lets it go (`hold`), or fails (`failNext`). */
async function openGatedArchive(): Promise<{
  archive: Archive;
  hold(): { started: Promise<void>; release(): void };
  failNext(): void;
  close(): Promise<void>;
}> {
  const real = await openLanceArchive({ uri: await mkdtemp(path.join(root, 'lance-')), embedder: createHashingEmbedder() });
  let gate: (() => Promise<void>) | undefined;
  return {
    archive: {
      ...real,
      async eraseConversation(conversationId) {
        await gate?.();
        return real.eraseConversation!(conversationId);
      },
    },
    hold() {
      let started!: () => void;
      let release!: () => void;
      const go = new Promise<void>((resolve) => (release = resolve));
      const startedPromise = new Promise<void>((resolve) => (started = resolve));
      gate = () => {
        gate = undefined;
        started();
        return go;
      };
      return { started: startedPromise, release };
    },
    failNext() {
      gate = () => {
        gate = undefined;
        return Promise.reject(new Error('injected: the archive folder is read-only'));
      };
    },
    close: () => real.close(),
  };
}

const callingLookup = (id: string): NewMessage[] => [
  { role: 'user', content: 'where is the crate?' },
  { role: 'assistant', content: 'looking it up', toolCalls: [{ id, type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
];

for (const backend of storeBackends()) {
  describe(`${backend.name}: an erase never keeps a tool result whose call it removed`, () => {
    let opened: OpenedBackend;
    let lance: Awaited<ReturnType<typeof openGatedArchive>>;
    let memfold: Memfold;
    beforeAll(async () => {
      opened = await backend.open();
    });
    afterAll(() => opened?.cleanup());
    afterEach(async () => {
      await memfold?.close();
      await lance?.close();
    });

    it('the result of an erased call, appended while the erase runs, goes with it; what follows is kept and compacts', async () => {
      lance = await openGatedArchive();
      memfold = await createMemfold({ persistence: opened.persistence, archive: lance.archive, env: {}, compaction: { contextWindow: 4_096 } });
      const conversationId = uniqueWord('racing');
      await memfold.append(conversationId, [...markedTurns(uniqueWord('before'), 3), ...callingLookup('call_x')]);
      const held = lance.hold();
      const erasing = memfold.eraseConversation(conversationId);
      await held.started;
      // The agent's tool finished while the erase ran: its result is acknowledged (its call was still live).
      await memfold.append(conversationId, [{ role: 'tool', toolCallId: 'call_x', content: 'crate 7 is at dock 3' }]);
      const answer = await memfold.append(conversationId, [{ role: 'assistant', content: 'the crate is at dock 3' }]);
      held.release();
      expect(await erasing).toMatchObject({ status: 'erased', live: { messagesKept: 1 } });

      expect((await memfold.history(conversationId)).map((m) => m.id)).toEqual(answer.map((m) => m.id));
      expect((await memfold.context(conversationId)).filter((m) => m.role === 'tool')).toEqual([]);
      const after = uniqueWord('after');
      for (let from = 0; from < 12; from += 4) {
        await memfold.append(conversationId, markedTurns(after, 4, from));
        const result = await memfold.compact(conversationId, { force: true });
        expect(result.status, result.error).toBe('compacted');
      }
    });

    it('the result of an erased call, appended after the erase failed, goes with it when a compaction finishes the erase', async () => {
      lance = await openGatedArchive();
      memfold = await createMemfold({ persistence: opened.persistence, archive: lance.archive, env: {}, compaction: { contextWindow: 4_096 } });
      const conversationId = uniqueWord('failed');
      await memfold.append(conversationId, [...markedTurns(uniqueWord('before'), 3), ...callingLookup('call_y')]);
      lance.failNext();
      await expect(memfold.eraseConversation(conversationId)).rejects.toThrow(/stopped part-way/);
      await memfold.append(conversationId, [{ role: 'tool', toolCallId: 'call_y', content: 'crate 8 is at dock 4' }]);
      const after = uniqueWord('after');
      const kept = await memfold.append(conversationId, markedTurns(after, 4));
      // The compaction finishes the erase first (reconcile), then compacts what was kept.
      const result = await memfold.compact(conversationId, { force: true });
      expect(result.status, result.error).toBe('compacted');
      const live = await memfold.history(conversationId);
      expect(live.filter((m) => m.role === 'tool' && m.toolCallId === 'call_y')).toEqual([]);
      expect(live.filter((m) => m.kind !== 'clip_archive')[0]?.id).toBe(kept[0]!.id);
    });
  });
}
