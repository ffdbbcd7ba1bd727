/**
 * The original design's contract of `compress(history, conversationId) -> CompactionResult`, on the in-memory
 * adapters and the offline summarizer, through the public API: compress is compactHistory; it never throws (a failing
 * summarizer or archive, bad input: a failed result); on failure the history given comes back unchanged and nothing
 * live changes; batches are archived with their `[depth|start|end|count]` header before any message is deleted
 * (observed by wrappers over the real adapters that record call order); the clip-archive shows the first and last N
 * batches and names memory_read for the middle; re-summarization happens past clip window + buffer, never before.
 */
import { describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import {
  clipArchiveLabels,
  createCompactor,
  createExtractiveSummarizer,
  createInMemoryArchive,
  createInMemoryPersistence,
  parseHeader,
  type Archive,
  type CompactionConfig,
  type CompactionSettings,
  type ConversationMessage,
  type PersistenceProvider,
  type Summarizer,
} from '../../src/index.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { dialogue } from '../support/messages.js';

const config: Partial<CompactionConfig> = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };

/** A wrapper over a real adapter that records each call by name, in order, and may run a check before one. */
function recording<T extends object>(real: T, log: string[], name: string, before: Record<string, (...args: never[]) => Promise<void>> = {}): T {
  return new Proxy(real, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return async (...args: unknown[]) => {
        log.push(`${name}.${prop}`);
        await before[prop]?.(...(args as never[]));
        return value.apply(target, args);
      };
    },
  });
}

interface Setup {
  archive?: (real: Archive) => Archive;
  persistence?: (real: PersistenceProvider) => PersistenceProvider;
  summarizer?: Summarizer;
  settings?: Partial<CompactionConfig>;
}

function setup(options: Setup = {}) {
  const persistence = createInMemoryPersistence({ clock: () => new Date(Date.UTC(2024, 3, 1)) });
  const memory = createInMemoryArchive({ embedder: createHashingEmbedder() });
  let ids = 0;
  const compactor = createCompactor({
    summarizer: options.summarizer ?? createExtractiveSummarizer(),
    archive: options.archive?.(memory) ?? memory,
    persistence: options.persistence?.(persistence) ?? persistence,
    tokens: createTokenCounter(),
    settings: { ...config, ...options.settings },
    clock: () => Date.UTC(2024, 3, 1),
    newId: () => `id-${++ids}`,
  });
  return { persistence, memory, compactor };
}

async function seeded(options: Setup = {}, turns = 30) {
  const made = setup(options);
  // Ids given, so two setups label their batches alike.
  const messages = [{ role: 'system' as const, content: 'You are terse.' }, ...dialogue(turns)].map((m, i) => ({ ...m, id: `m${i}` }));
  await made.persistence.append('c', messages);
  return { ...made, history: await made.persistence.loadHistory('c') };
}

/** A real summarizer whose every request fails. */
function failingSummarizer(fail: () => never): Summarizer {
  const real = createExtractiveSummarizer();
  return { id: real.id, contextWindow: real.contextWindow, summarize: () => fail() };
}

describe('compress(history, conversationId)', () => {
  it('is compactHistory: the same result and the same stores, and CompactionConfig is CompactionSettings', async () => {
    const a = await seeded();
    const b = await seeded();
    const compressed = await a.compactor.compress(a.history, 'c');
    const compacted = await b.compactor.compactHistory(b.history, 'c');
    expect(compressed.status).toBe('compacted');
    expect(compressed).toEqual(compacted);
    expect(await a.persistence.loadHistory('c')).toEqual(await b.persistence.loadHistory('c'));
    expect(await a.memory.list({ conversationId: 'c' })).toEqual(await b.memory.list({ conversationId: 'c' }));
    const settings: CompactionSettings = a.compactor.settings satisfies CompactionConfig;
    expect(settings.contextWindow).toBe(2_000);
  });

  const failures: Array<[string, Setup]> = [
    ['a summarizer that rejects', { summarizer: failingSummarizer(() => Promise.reject(new Error('model down')) as never) }],
    [
      'a summarizer that throws synchronously',
      {
        summarizer: failingSummarizer(() => {
          throw new TypeError('bug in the adapter');
        }),
      },
    ],
    ['an archive whose writes fail', { archive: (real) => recording(real, [], 'archive', { write: () => Promise.reject(new Error('disk full')) }) }],
    [
      'a store whose commit fails',
      { persistence: (real) => recording(real, [], 'store', { commitCompaction: () => Promise.reject(new Error('connection lost')) }) },
    ],
  ];
  it.each(failures)('never throws with %s: the result says failed, the history given comes back unchanged, nothing live changes', async (_name, options) => {
    const { persistence, compactor, history } = await seeded(options);
    const given = structuredClone(history);
    const result = await compactor.compress(history, 'c');
    expect(result).toMatchObject({ status: 'failed', error: expect.any(String) });
    expect(result.failureCode).toBeDefined();
    expect(result.history).toEqual(given);
    expect(history).toEqual(given);
    expect(await persistence.loadHistory('c')).toEqual(given);
  });

  it('never throws on bad input: a failed result, the input handed back', async () => {
    const { compactor, history } = await seeded();
    for (const [input, id] of [
      [null, 'c'],
      ['not a history', 'c'],
      [[{ role: 'user' }], 'c'],
      [history, ''],
    ] as const) {
      const result = await compactor.compress(input as unknown as ConversationMessage[], id);
      expect(result).toMatchObject({ status: 'failed', failureCode: 'invalid_input' });
      expect(result.history).toEqual(Array.isArray(input) ? input : []);
    }
  });

  it('archives every batch with its [depth|start|end|count] header before any message is deleted', async () => {
    const calls: string[] = [];
    let memory!: Archive;
    /** At the commit that deletes: every deleted message is already in a transcript and a depth-0 batch with its header. */
    const checkArchived = async (commit: { deleteIds: string[] }) => {
      const entries = await memory.list({ conversationId: 'c' });
      const summaries = entries.filter((e) => e.kind === 'summary' && e.depth === 0);
      for (const batch of summaries) {
        const [first] = batch.content.split('\n');
        expect(first).toMatch(/^\[depth:0\|start:[^|\]]+\|end:[^|\]]+\|count:\d+\]$/);
        expect(parseHeader(first!)).toEqual({ depth: 0, start: batch.start, end: batch.end, count: batch.count });
        expect(batch.count).toBe(batch.sourceIds.length);
      }
      const summarized = new Set(summaries.flatMap((b) => b.sourceIds));
      const transcribed = new Set(entries.filter((e) => e.kind === 'transcript').flatMap((e) => e.sourceIds));
      expect(commit.deleteIds.length).toBeGreaterThan(0);
      for (const id of commit.deleteIds) {
        expect(summarized.has(id), id).toBe(true);
        expect(transcribed.has(id), id).toBe(true);
      }
      calls.push('checked');
    };
    const { compactor, history, persistence } = await seeded({
      archive: (real) => {
        memory = real;
        return recording(real, calls, 'archive');
      },
      persistence: (real) => recording(real, calls, 'store', { commitCompaction: checkArchived as never }),
    });
    const result = await compactor.compress(history, 'c');
    expect(result.status).toBe('compacted');
    expect(result.batches.length).toBeGreaterThan(0);
    // The order of calls: archive writes, then the one commit that deletes; no delete outside it.
    const commit = calls.indexOf('store.commitCompaction');
    expect(calls.slice(commit, commit + 2)).toEqual(['store.commitCompaction', 'checked']);
    expect(calls.lastIndexOf('archive.write')).toBeLessThan(commit);
    expect(calls.filter((c) => c === 'store.commitCompaction' || c === 'store.deleteByIds')).toEqual(['store.commitCompaction']);
    const live = new Set((await persistence.loadHistory('c')).map((m) => m.id));
    expect(history.filter((m) => !live.has(m.id))).toHaveLength(result.archivedMessages);
  });

  it('shows the first and last N batches in the clip-archive, names memory_read for the middle, and re-summarizes only past clip window + buffer', async () => {
    const clip = { clipFirst: 2, clipLast: 2, clipBuffer: 2 };
    const { compactor, persistence, memory } = await seeded({ settings: clip }, 4);
    const window = clip.clipFirst + clip.clipLast;
    let frontierSize = 0;
    let sawGap = false;
    const seen = new Set<string>();
    for (let round = 1; round <= 16; round++) {
      // A few turns a round: two new batches each, so the frontier passes through every case.
      await persistence.append('c', dialogue(3, round * 3 + 1));
      const result = await compactor.compress(await persistence.loadHistory('c'), 'c', { force: true });
      expect(result.status).toBe('compacted');
      // Before re-summarization the frontier held the previous one plus this compaction's new depth-0 batches.
      const grown = frontierSize + result.batches.length;
      if (grown > window + clip.clipBuffer) expect(result.resummarized.length, `round ${round}`).toBeGreaterThan(0);
      else expect(result.resummarized, `round ${round}`).toEqual([]);
      seen.add(grown > window + clip.clipBuffer ? 'past buffer' : grown > window ? 'in buffer' : 'within window');

      const frontier = await compactor.frontier('c');
      frontierSize = frontier.length;
      const [clipRow] = await persistence.loadHistory('c');
      expect(clipRow).toMatchObject({ seq: 0, role: 'system', kind: 'clip_archive' });
      const text = clipRow!.content;
      if (frontier.length > window) {
        sawGap = true;
        const shown = [...frontier.slice(0, clip.clipFirst), ...frontier.slice(-clip.clipLast)].map((b) => b.label);
        expect(clipArchiveLabels(text)).toEqual(shown);
        const omitted = frontier.length - window;
        expect(text).toMatch(new RegExp(`^\\[\\.\\.\\. ${omitted} batches from \\S+ to \\S+ are not shown here; call memory_read with a query`, 'm'));
      } else {
        expect(clipArchiveLabels(text)).toEqual(frontier.map((b) => b.label));
        expect(text).not.toMatch(/not shown here/);
      }
    }
    expect(sawGap).toBe(true);
    // Each case came up: room left in the clip window, a frontier in the buffer (shown with a gap, not folded), past it.
    expect([...seen].sort()).toEqual(['in buffer', 'past buffer', 'within window']);
    const summaries = await memory.list({ conversationId: 'c', kind: 'summary' });
    expect(Math.max(...summaries.map((b) => b.depth))).toBeGreaterThanOrEqual(1);
    // Every higher-depth batch names its depth in its header and covers batches of the depth below.
    for (const batch of summaries.filter((b) => b.depth > 0)) {
      expect(parseHeader(batch.content.split('\n')[0]!)).toMatchObject({ depth: batch.depth, count: batch.sourceIds.length });
      const children = summaries.filter((b) => batch.sourceIds.includes(b.label));
      expect(children.map((c) => c.parentLabel)).toEqual(batch.sourceIds.map(() => batch.label));
    }
  });
});
