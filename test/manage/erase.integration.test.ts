/**
 * Export and erase through the public API, on PGlite and PostgreSQL with a real LanceDB folder: a conversation
 * compacted into several batches (tool outputs cleared, transcripts archived) exports every message where it lives;
 * after erasing it, no table and no file under the LanceDB folder holds its id or its marker word, and the other
 * conversation in the same stores is untouched. A crash midway (an archive that fails part-way through its purge) is
 * finished by the next open's reconcile.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { ExportRecord } from '../../src/erase-export/export-conversation.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { filesContaining, markedTurns, openSqlStore, sqlBackendNames, tablesContaining, uniqueWord, type SqlStore } from './manage-fixtures.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'memfold-erase-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const open = (persistence: PersistenceProvider, lancedbUri: string, extra: { archive?: Archive } = {}) =>
  createMemfold({ persistence, config: { lancedbUri }, env: {}, compaction: { contextWindow: 4_096 }, ...extra });

/** Append `turns` marked turns a few at a time, compacting after each, as an agent loop would. */
async function grow(memfold: Memfold, conversationId: string, marker: string, turns: number): Promise<ConversationMessage[]> {
  const stored: ConversationMessage[] = [];
  for (let from = 0; from < turns; from += 4) {
    stored.push(...(await memfold.append(conversationId, markedTurns(marker, Math.min(4, turns - from), from))));
    const result = await memfold.compact(conversationId);
    expect(result.status, result.error).not.toBe('failed');
  }
  return stored;
}

async function collect(records: AsyncIterable<ExportRecord>): Promise<ExportRecord[]> {
  const out: ExportRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

describe.each(sqlBackendNames())('%s: export and erase', (backend) => {
  let store: SqlStore;
  let lance: string;
  let memfold: Memfold;
  const doomed = uniqueWord('erasecase');
  const marker = uniqueWord('zorblax');
  const other = uniqueWord('keepcase');
  const otherMarker = uniqueWord('quaffle');
  let appended: ConversationMessage[];
  let otherHistory: string[];

  beforeAll(async () => {
    store = await openSqlStore(backend);
    lance = await mkdtemp(path.join(root, `${backend}-`));
    memfold = await open(store.persistence, lance);
    appended = await grow(memfold, doomed, marker, 36);
    await grow(memfold, other, otherMarker, 20);
    await memfold.observeUsage(doomed, { promptTokens: 5_000 });
    await store.persistence.setLoopGuardState(doomed, { streak: 1, trigger: 3_000, paused: false });
    otherHistory = (await memfold.history(other)).map((m) => m.id);
  });
  afterAll(async () => {
    await memfold?.close();
    await store?.cleanup();
  });

  it('exports every message where it lives, and every batch with its children', async () => {
    const records = await collect(memfold.exportConversation(doomed));
    expect(records[0]).toMatchObject({ kind: 'conversation', conversationId: doomed, format: 'memfold.conversation-export/1' });
    const summaries = records.filter((r) => r.kind === 'summary');
    expect(summaries.length).toBeGreaterThanOrEqual(3);
    expect(records.some((r) => r.kind === 'segment' && r.entryKind === 'transcript')).toBe(true);
    const byLabel = new Map(summaries.map((s) => [s.label, s]));
    for (const summary of summaries) {
      for (const child of summary.children) expect(byLabel.get(child)?.parentLabel).toBe(summary.label);
      expect(summary.content).toMatch(/^\[depth:\d+\|start:/);
    }
    const live = new Map(records.flatMap((r) => (r.kind === 'live_message' && r.message.kind !== 'clip_archive' ? [[r.message.id, r.message]] : [])));
    const transcribed = new Map(records.flatMap((r) => (r.kind === 'archived_message' && r.entryKind === 'transcript' ? [[r.message.id, r.message]] : [])));
    const clearedOutputs = new Map(records.flatMap((r) => (r.kind === 'archived_message' && r.entryKind === 'tool_output' ? [[r.label, r.message]] : [])));
    for (const message of appended) {
      // Live or archived verbatim, never both in delete mode: exactly where the compactions left it.
      expect(live.has(message.id) !== transcribed.has(message.id), message.id).toBe(true);
      const found = (live.get(message.id) ?? transcribed.get(message.id))!;
      // A live output tier 2 cleared holds a placeholder; its text is in the tool_output entry the placeholder names.
      const text = found.clearedOutputLabel ? clearedOutputs.get(found.clearedOutputLabel)?.content : found.content;
      expect(text, message.id).toBe(message.content);
      expect(text).toContain(marker);
    }
    expect([...live.values()].some((m) => m.clearedOutputLabel)).toBe(true);
    expect(transcribed.size).toBeGreaterThan(appended.length / 2);
    for (const record of records) expect(JSON.parse(JSON.stringify(record))).toEqual(record);
  });

  it('lists both conversations with their live counts', async () => {
    const listed = await memfold.listConversations();
    expect(listed.map((c) => c.id).sort()).toEqual([doomed, other].sort());
    expect(listed.find((c) => c.id === doomed)!.messageCount).toBe((await memfold.history(doomed)).filter((m) => m.kind !== 'clip_archive').length);
  });

  it('erases it from every table and every LanceDB file, leaving the other conversation as it was', async () => {
    expect(await tablesContaining(store.db, [doomed, marker])).not.toEqual([]);
    expect(await filesContaining(lance, [marker])).not.toEqual([]);
    const started = performance.now();
    const result = await memfold.eraseConversation(doomed);
    const ms = performance.now() - started;
    expect(result.status).toBe('erased');
    if (result.status !== 'erased') return;
    expect(result.live.conversations).toBe(1);
    expect(result.live.calibration).toBe(1);
    expect(result.live.loopGuard).toBe(1);
    expect(result.archive.entries).toBeGreaterThan(5);
    console.info(
      `${backend}: erased ${appended.length} messages (${result.archive.entries} archive entries, ${result.archive.rowsRewritten} rows rewritten) in ${ms.toFixed(0)} ms`,
    );

    expect(await tablesContaining(store.db, [doomed, marker])).toEqual([]);
    expect(await filesContaining(lance, [doomed, marker])).toEqual([]);
    // The scans do find what is still stored: the other conversation's id (in its rows and the scalar indexes), and its
    // words in the tables. (Compacted LanceDB data files may compress text, so a word is not always visible in them.)
    const stillThere = await tablesContaining(store.db, [other, otherMarker]);
    for (const needle of [other, otherMarker]) expect(stillThere.some((hit) => hit.endsWith(`~ ${needle}`))).toBe(true);
    expect((await filesContaining(lance, [other])).some((file) => file.startsWith('memfold_archive.lance/data/'))).toBe(true);
    expect((await filesContaining(lance, [other])).some((file) => file.startsWith('memfold_archive.lance/_indices/'))).toBe(true);

    expect((await memfold.history(other)).map((m) => m.id)).toEqual(otherHistory);
    const hits = await memfold.archive.search({ conversationId: other, query: `${otherMarker} crate 3` });
    expect(hits.length).toBeGreaterThan(0);
    expect(await memfold.archive.list({ conversationId: doomed })).toEqual([]);
    expect((await memfold.listConversations()).map((c) => c.id)).toEqual([other]);
  });

  it('says nothing was stored for an unknown conversation, and names the field of a bad id', async () => {
    expect(await memfold.eraseConversation(doomed)).toEqual({ status: 'not_found', conversationId: doomed });
    await expect(memfold.eraseConversation('')).rejects.toThrow(/conversationId/);
    await expect(memfold.eraseConversation(42 as unknown as string)).rejects.toThrow(/conversationId/);
    expect(await collect(memfold.exportConversation(doomed))).toHaveLength(1);
  });
});

describe.each(sqlBackendNames())('%s: an erase cut short', (backend) => {
  it('is finished by the next open: nothing of the conversation remains', async () => {
    const store = await openSqlStore(backend);
    const lance = await mkdtemp(path.join(root, `crash-${backend}-`));
    const doomed = uniqueWord('crashcase');
    const marker = uniqueWord('zorblax');
    const other = uniqueWord('keepcase');
    try {
      const real = await openLanceArchive({ uri: lance, embedder: createHashingEmbedder() });
      // The real archive, failing part-way through the erase: half the entries deleted, then the process "dies".
      const failing: Archive = {
        ...real,
        async eraseConversation(conversationId) {
          const entries = await real.list({ conversationId });
          await real.delete(
            conversationId,
            entries.slice(0, Math.ceil(entries.length / 2)).map((e) => e.label),
          );
          throw new Error('injected crash in the middle of the archive purge');
        },
      };
      const first = await open(store.persistence, lance, { archive: failing });
      await grow(first, doomed, marker, 24);
      await grow(first, other, uniqueWord('quaffle'), 8);
      await expect(first.eraseConversation(doomed)).rejects.toThrow(/stopped part-way.*next reconcile finishes it/);
      const [pending] = await store.persistence.listPendingOperations(doomed);
      expect(pending).toMatchObject({ kind: 'erase', status: 'planned' });
      await first.close();
      await real.close();

      const events: string[] = [];
      const again = await createMemfold({
        persistence: store.persistence,
        config: { lancedbUri: lance },
        env: {},
        onEvent: (event) => void (event.type === 'reconciled' && events.push(`${event.conversationId}: ${event.reason}`)),
      });
      expect(events).toEqual([expect.stringMatching(new RegExp(`^${doomed}: finished an interrupted erase`))]);
      expect(await store.persistence.listPendingOperations()).toEqual([]);
      expect(await tablesContaining(store.db, [doomed, marker])).toEqual([]);
      expect(await filesContaining(lance, [doomed, marker])).toEqual([]);
      expect((await again.listConversations()).map((c) => c.id)).toEqual([other]);
      await again.close();
    } finally {
      await store.cleanup();
    }
  });
});
