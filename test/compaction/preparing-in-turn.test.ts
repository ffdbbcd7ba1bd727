/**
 * Compactions started together prepare in turn (`preparingSlot`, compactor-context.ts): at most PREPARING_AT_ONCE read
 * and plan their history at once, each after a turn of the event loop. Before, a hundred compactions started at once
 * each read its rows before any sent its first model request (the stores answer in promise callbacks, so nothing else
 * ran until the last plan was made): the model sat idle for a second. A wait for a place ends with the caller's
 * signal, and a read that fails gives its place back.
 */
import { describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { PREPARING_AT_ONCE } from '../../src/compaction/compactor-context.js';
import { createCompactor } from '../../src/compaction/compactor.js';
import type { NewMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';

const at = (minute: number) => new Date(Date.UTC(2024, 4, 2, 9, minute)).toISOString();

function chat(turns: number): NewMessage[] {
  return Array.from({ length: turns }, (_, t) => [
    { role: 'user' as const, content: `Question ${t} about the garden: ${'which plants need shade and when to water them. '.repeat(4)}`, createdAt: at(2 * t) },
    { role: 'assistant' as const, content: `Answer ${t}: ${'ferns and hostas like shade; water early in the morning. '.repeat(4)}`, createdAt: at(2 * t + 1) },
  ]).flat();
}

/** The live store, its history reads recorded in `log` and, for the conversations in `held`, kept waiting until released. */
function recordingStore(log: string[], held = new Map<string, Promise<void>>(), broken = new Set<string>()): PersistenceProvider {
  const inner = createInMemoryPersistence();
  return new Proxy(inner, {
    get(target, key, receiver) {
      if (key !== 'loadHistory') return Reflect.get(target, key, receiver);
      return async (conversationId: string) => {
        log.push(`read ${conversationId}`);
        await held.get(conversationId);
        if (broken.has(conversationId)) throw new Error(`disk error reading ${conversationId}`);
        return target.loadHistory(conversationId);
      };
    },
  });
}

/** A model double: the extractive summarizer behind instructions it re-sends (so the fold's requests go out early). */
function model(log: string[]): Summarizer {
  const extractive = createExtractiveSummarizer();
  return {
    ...extractive,
    promptOverhead: () => 'Summarize the transcript. '.repeat(20),
    async summarize(request) {
      log.push('model request');
      await new Promise((resolve) => setTimeout(resolve, 1));
      return extractive.summarize(request);
    },
  };
}

function compactorOn(persistence: PersistenceProvider, log: string[]) {
  return createCompactor({
    summarizer: model(log),
    archive: createInMemoryArchive({ embedder: createHashingEmbedder() }),
    persistence,
    tokens: createTokenCounter(),
    settings: { contextWindow: 4_000, chunkTokens: 600 },
  });
}

describe('compactions prepare in turn', () => {
  it('sends the first model request before most of the compactions started with it have read their rows', async () => {
    const log: string[] = [];
    const persistence = recordingStore(log);
    const compactor = compactorOn(persistence, log);
    const ids = Array.from({ length: 12 }, (_, i) => `garden-${i}`);
    for (const id of ids) await persistence.append(id, chat(30));
    log.length = 0;

    const results = await Promise.all(ids.map((id) => compactor.compactStored(id, { force: true })));
    expect(results.map((r) => r.status)).toEqual(ids.map(() => 'compacted'));
    const firstRequest = log.indexOf('model request');
    const reads = log.filter((entry) => entry.startsWith('read '));
    expect(reads).toHaveLength(ids.length);
    // Started all at once, they read in the order they started; the first request goes out before the fourth read.
    expect(reads).toEqual(ids.map((id) => `read ${id}`));
    expect(firstRequest).toBeLessThan(log.indexOf(reads[3]!));
  });

  it('ends a wait for a place when the caller aborts, reading nothing', async () => {
    const log: string[] = [];
    let release = () => {};
    const holding = new Promise<void>((resolve) => (release = resolve));
    const busy = Array.from({ length: PREPARING_AT_ONCE }, (_, i) => `busy-${i}`);
    const persistence = recordingStore(log, new Map(busy.map((id) => [id, holding])));
    const compactor = compactorOn(persistence, log);
    for (const id of [...busy, 'waiting']) await persistence.append(id, chat(30));
    log.length = 0;

    const running = busy.map((id) => compactor.compactStored(id, { force: true }));
    const stop = new AbortController();
    const waiting = compactor.compactStored('waiting', { force: true, signal: stop.signal });
    while (log.filter((entry) => entry.startsWith('read busy-')).length < busy.length) await new Promise((resolve) => setImmediate(resolve));
    stop.abort(new Error('the user left'));
    const aborted = await waiting;
    expect(aborted).toMatchObject({ status: 'failed', failureCode: 'aborted' });
    expect(log).not.toContain('read waiting');

    release();
    expect((await Promise.all(running)).map((r) => r.status)).toEqual(busy.map(() => 'compacted'));
  });

  it('gives the place back when reading the rows fails', async () => {
    const log: string[] = [];
    const broken = Array.from({ length: PREPARING_AT_ONCE + 1 }, (_, i) => `broken-${i}`);
    const persistence = recordingStore(log, new Map(), new Set(broken));
    const compactor = compactorOn(persistence, log);
    for (const id of [...broken, 'healthy']) await persistence.append(id, chat(30));

    const failed = await Promise.all(broken.map((id) => compactor.compactStored(id, { force: true })));
    expect(failed.map((r) => r.status)).toEqual(broken.map(() => 'failed'));
    expect(failed[0]!.error).toContain('disk error');
    expect(await compactor.compactStored('healthy', { force: true })).toMatchObject({ status: 'compacted' });
    // A caller's history takes a place of its own: it is not left waiting either.
    const again = await compactor.compactHistory(await persistence.loadHistory('healthy'), 'healthy', { force: true });
    expect(again.status).not.toBe('failed');
  });
});
