/**
 * An erase removes what the conversation held when it was asked for, never a message acknowledged after it: through
 * the public API, on every store (PGlite, PostgreSQL, memory) with a real LanceDB folder. An erase that failed
 * part-way, or that a dead process left journaled, is finished later (by a compaction's reconcile, or the next open)
 * with the messages appended meanwhile kept, live or archived; appends racing the erase itself are kept too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { ExportRecord } from '../../src/erase-export/export-conversation.js';
import type { ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold, type Memfold, type MemfoldOptions } from '../../src/memfold.js';
import { storeBackends, type OpenedBackend } from '../support/backends.js';
import { markedTurns, uniqueWord } from './manage-fixtures.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'memfold-erase-boundary-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A real LanceDB archive whose purge fails while `failing` is set, or waits for `gate` when one is set. */
async function openArchive(): Promise<{ archive: Archive; failing: { on: boolean }; gate: { wait?: () => Promise<void> }; close(): Promise<void> }> {
  const real = await openLanceArchive({ uri: await mkdtemp(path.join(root, 'lance-')), embedder: createHashingEmbedder() });
  const failing = { on: false };
  const gate: { wait?: () => Promise<void> } = {};
  const archive: Archive = {
    ...real,
    async eraseConversation(conversationId) {
      if (failing.on) throw new Error('injected: the archive folder is read-only');
      await gate.wait?.();
      return real.eraseConversation!(conversationId);
    },
  };
  return { archive, failing, gate, close: () => real.close() };
}

const sixty = (marker: string): NewMessage[] =>
  Array.from({ length: 60 }, (_, i) => ({ role: i % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `${marker} after the erase ${i}` }));

async function collect(records: AsyncIterable<ExportRecord>): Promise<ExportRecord[]> {
  const out: ExportRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

/** Where each stored message is now: the ids live, and the ids archived verbatim (transcripts). */
async function whereabouts(memfold: Memfold, conversationId: string): Promise<{ live: Set<string>; archived: Set<string>; texts: string[] }> {
  const records = await collect(memfold.exportConversation(conversationId));
  const live = records.flatMap((r) => (r.kind === 'live_message' && r.message.kind !== 'clip_archive' ? [r.message] : []));
  const archived = records.flatMap((r) => (r.kind === 'archived_message' && r.entryKind === 'transcript' ? [r.message] : []));
  return {
    live: new Set(live.map((m) => m.id)),
    archived: new Set(archived.map((m) => m.id)),
    texts: [...live, ...archived].map((m) => m.content ?? ''),
  };
}

/** Every message given is live or archived verbatim; nothing of `gone` (the erased marker) is stored. */
async function expectKeptExactly(memfold: Memfold, conversationId: string, kept: ConversationMessage[], gone: string): Promise<void> {
  const { live, archived, texts } = await whereabouts(memfold, conversationId);
  expect(kept.filter((m) => !live.has(m.id) && !archived.has(m.id)).map((m) => m.content)).toEqual([]);
  expect(texts.filter((text) => text.includes(gone))).toEqual([]);
  expect(await memfold.archive.search({ conversationId, query: gone })).toEqual([]);
}

for (const backend of storeBackends()) {
  describe(`${backend.name}: an erase never removes what was appended after it was asked for`, () => {
    let opened: OpenedBackend;
    let lance: Awaited<ReturnType<typeof openArchive>>;
    const open = (extra: Partial<MemfoldOptions> = {}) =>
      createMemfold({ persistence: opened.persistence, archive: lance.archive, env: {}, compaction: { contextWindow: 4_096 }, ...extra });

    /** A conversation compacted into archived batches, every message carrying `marker`. */
    async function grow(memfold: Memfold, conversationId: string, marker: string): Promise<void> {
      for (let from = 0; from < 12; from += 4) {
        await memfold.append(conversationId, markedTurns(marker, 4, from));
        const result = await memfold.compact(conversationId);
        expect(result.status, result.error).not.toBe('failed');
      }
      expect((await memfold.archive.list({ conversationId })).length).toBeGreaterThan(0);
    }

    beforeAll(async () => {
      opened = await backend.open();
    });
    afterAll(() => opened?.cleanup());
    afterEach(() => lance?.close());

    it('a failed erase, then 60 appends: the compaction that finishes the erase keeps all 60', async () => {
      lance = await openArchive();
      const events: string[] = [];
      const memfold = await open({ onEvent: (event) => void (event.type === 'reconciled' && events.push(event.reason)) });
      try {
        const conversationId = uniqueWord('failed');
        const before = uniqueWord('before');
        await grow(memfold, conversationId, before);
        lance.failing.on = true;
        await expect(memfold.eraseConversation(conversationId)).rejects.toThrow(/stopped part-way.*next reconcile finishes it/);
        lance.failing.on = false;

        const after = await memfold.append(conversationId, sixty(uniqueWord('after')));
        const result = await memfold.compact(conversationId, { force: true });
        expect(result.status, result.error).not.toBe('failed');
        expect(events).toEqual([expect.stringMatching(/^finished an interrupted erase/)]);
        await expectKeptExactly(memfold, conversationId, after, before);
        expect(await opened.persistence.listPendingOperations(conversationId)).toEqual([]);
      } finally {
        await memfold.close();
      }
    });

    it('an erase a dead process left journaled is finished by the next open, keeping what others appended since', async () => {
      lance = await openArchive();
      const conversationId = uniqueWord('dead');
      const before = uniqueWord('before');
      const first = await open();
      await grow(first, conversationId, before);
      // What a process that died right after journaling its erase leaves: the operation, pending.
      lance.failing.on = true;
      await expect(first.eraseConversation(conversationId)).rejects.toThrow(/stopped part-way/);
      lance.failing.on = false;
      await first.close();

      // Another process keeps appending (no reconcile on its open), then the next open reconciles.
      const other = await open({ reconcileOnOpen: false });
      const after = [...(await other.append(conversationId, sixty(uniqueWord('after')))), ...(await other.append(conversationId, sixty(uniqueWord('more'))))];
      await other.close();
      const events: string[] = [];
      const next = await open({ onEvent: (event) => void (event.type === 'reconciled' && events.push(event.reason)) });
      try {
        expect(events).toEqual([expect.stringMatching(/^finished an interrupted erase/)]);
        await expectKeptExactly(next, conversationId, after, before);
        expect((await next.history(conversationId)).map((m) => m.id)).toEqual(after.map((m) => m.id));
        expect((await next.listConversations()).find((c) => c.id === conversationId)?.messageCount).toBe(120);
      } finally {
        await next.close();
      }
    });

    it('appends that land while the erase runs are kept; the erase removes only what was there when it was asked for', async () => {
      lance = await openArchive();
      const memfold = await open();
      try {
        const conversationId = uniqueWord('racing');
        const before = uniqueWord('before');
        await grow(memfold, conversationId, before);
        let purgeStarted!: () => void;
        const started = new Promise<void>((resolve) => (purgeStarted = resolve));
        let letPurgeGo!: () => void;
        const go = new Promise<void>((resolve) => (letPurgeGo = resolve));
        lance.gate.wait = () => {
          purgeStarted();
          return go;
        };
        const erasing = memfold.eraseConversation(conversationId);
        await started;
        const during = await memfold.append(conversationId, sixty(uniqueWord('during')));
        letPurgeGo();
        const result = await erasing;
        expect(result).toMatchObject({ status: 'erased', live: { conversations: 0, messagesKept: 60 } });
        await expectKeptExactly(memfold, conversationId, during, before);
        expect((await memfold.history(conversationId)).map((m) => m.id)).toEqual(during.map((m) => m.id));

        // Asked again, the erase removes those too: the conversation is gone.
        delete lance.gate.wait;
        expect(await memfold.eraseConversation(conversationId)).toMatchObject({ status: 'erased', live: { conversations: 1, messagesKept: 0 } });
        expect(await memfold.history(conversationId)).toEqual([]);
        expect((await memfold.listConversations()).map((c) => c.id)).not.toContain(conversationId);
      } finally {
        await memfold.close();
      }
    });

    it('a failed erase asked again removes what was appended before the second request too', async () => {
      lance = await openArchive();
      const memfold = await open();
      try {
        const conversationId = uniqueWord('twice');
        const before = uniqueWord('before');
        await grow(memfold, conversationId, before);
        lance.failing.on = true;
        await expect(memfold.eraseConversation(conversationId)).rejects.toThrow(/stopped part-way/);
        lance.failing.on = false;
        await memfold.append(conversationId, sixty(before));
        expect(await memfold.eraseConversation(conversationId)).toMatchObject({ status: 'erased' });
        expect(await memfold.history(conversationId)).toEqual([]);
        expect(await memfold.archive.list({ conversationId })).toEqual([]);
        expect(await opened.persistence.listOperations(conversationId)).toEqual([]);
      } finally {
        await memfold.close();
      }
    });
  });
}
