/**
 * The early fold (early-fold.ts): with a model summarizer, the fold's requests go out as soon as the conversation is
 * locked, before tier 2 and the journal write anything, and the compaction takes their answers. A wrong prediction
 * stops the early requests and the compaction folds as usual; an abort reaches a request it took.
 * The summarizer here is a model double: the extractive summarizer behind a delay, with instructions it re-sends
 * (`promptOverhead`), which is what makes memfold treat it as a model.
 */
import { describe, expect, it } from 'vitest';
import type { ListOptions } from '../../src/archive/archive.js';
import type { ArchiveEntry, NewMessage } from '../../src/conversation/types.js';
import { batchBody } from '../../src/compaction/format/headers.js';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer, SummarizeRequest } from '../../src/summarizer/summarizer.js';
import { checkInvariants } from '../support/invariants.js';

/** Turns of a shop assistant that looks orders up: each tool result is long enough for tier 2 to clear. */
function orderLookups(turns: number, from = 0): NewMessage[] {
  return Array.from({ length: turns }, (_, i) => {
    const t = from + i;
    const at = (minute: number) => new Date(Date.UTC(2024, 4, 2, 9, 4 * t + minute)).toISOString();
    const call = { id: `call_${t}`, type: 'function' as const, function: { name: 'get_order', arguments: JSON.stringify({ order_id: `ORD-${700 + t}` }) } };
    const items = Array.from({ length: 6 }, (_, k) => ({ sku: `SKU-${t}-${k}`, name: `item ${k} of order ${700 + t}`, price: 10 + k }));
    return [
      { role: 'user' as const, content: `Where is order ORD-${700 + t}? ${'I need it for the weekend trip. '.repeat(3)}`, createdAt: at(0) },
      { role: 'assistant' as const, content: '', toolCalls: [call], createdAt: at(1) },
      { role: 'tool' as const, toolCallId: call.id, content: JSON.stringify({ order_id: `ORD-${700 + t}`, status: 'shipped', items }), createdAt: at(2) },
      { role: 'assistant' as const, content: `Order ORD-${700 + t} shipped with DHL; it arrives Friday.`, createdAt: at(3) },
    ];
  }).flat();
}

interface Call {
  request: SummarizeRequest;
  /** Compaction stages already under way when the request was made. */
  stages: string[];
  /** Compaction stages already under way when the request was written, a turn of the event loop after it was made. */
  written?: string[];
  aborted: boolean;
}

/**
 * A model double: answers after `delayMs` (never, when `hang` says so for that request; when the next fold request is
 * made, when `hold` says so), records every request.
 */
function modelDouble(stages: string[], options: { delayMs: number; hang?: (call: number) => boolean; hold?: (call: number) => boolean }) {
  const extractive = createExtractiveSummarizer();
  const calls: Call[] = [];
  const held: (() => void)[] = [];
  const summarizer: Summarizer = {
    ...extractive,
    promptOverhead: () => 'Summarize the transcript. '.repeat(20),
    async summarize(request) {
      const call: Call = { request, stages: [...stages], aborted: false };
      calls.push(call);
      // Like an HTTP client, which writes the request a few promise hops and a turn of the event loop later.
      setImmediate(() => (call.written = [...stages]));
      // A fold request made lets the held ones answer: an event, not a time, decides where they stand by then.
      if (request.purpose === 'fold') for (const release of held.splice(0)) release();
      const hang = options.hang?.(calls.length) ?? false;
      const hold = options.hold?.(calls.length) ?? false;
      await new Promise<void>((resolve) => {
        const timer = hang ? undefined : hold ? held.push(resolve) : setTimeout(resolve, options.delayMs);
        // Like a client that does not stop on abort: only the compaction can stop waiting for it.
        request.signal?.addEventListener('abort', () => (call.aborted = true), { once: true });
        void timer;
      });
      return extractive.summarize(request);
    },
  };
  return { summarizer, calls };
}

/** A memfold on the in-memory stores; `listed`, when given, passes on each list of the archive's rows (a frontier read). */
async function open(summarizer: Summarizer, stages: string[], listed?: (found: ArchiveEntry[]) => Promise<ArchiveEntry[]> | ArchiveEntry[]): Promise<Memfold> {
  const archive = createInMemoryArchive({ embedder: createHashingEmbedder() });
  return createMemfold({
    store: 'memory',
    env: {},
    summarizer,
    ...(listed ? { archive: { ...archive, list: async (options: ListOptions) => listed(await archive.list(options)) } } : {}),
    compaction: { contextWindow: 4_000, chunkTokens: 600, keepToolUses: 2 },
    onEvent: (event) => {
      if (event.type === 'stage') stages.push(event.stage);
    },
  });
}

const foldRequests = (calls: readonly Call[]) => calls.filter((c) => c.request.purpose === 'fold');

describe('early fold', () => {
  it("sends the fold's first request before tier 2 writes, and the compaction takes every early answer: one request per summary", async () => {
    const stages: string[] = [];
    const { summarizer, calls } = modelDouble(stages, { delayMs: 20 });
    const memfold = await open(summarizer, stages);
    try {
      const appended = await memfold.append('orders', orderLookups(40));
      const result = await memfold.compact('orders', { force: true });
      expect(result.status, result.error).toBe('compacted');
      expect(result.tier).toBe(3);
      expect(result.toolOutputsCleared).toBeGreaterThan(0);
      // The first request went out before the clearing stage started, and was written before it too: the compaction
      // left the thread to the client for a turn of the event loop.
      expect(calls[0]!.stages).not.toContain('clear');
      expect(calls[0]!.written).toEqual(calls[0]!.stages);
      expect(stages.indexOf('clear')).toBeLessThan(stages.indexOf('fold'));
      // Every request made was the compaction's own: none sent twice, none wasted.
      expect(calls.length).toBe(result.modelCalls);
      expect(foldRequests(calls).length).toBeGreaterThan(2);
      // The chain holds: each fold request after the first builds on the summary the one before produced.
      const batches = result.batches.filter((b) => b.depth === 0);
      const folds = foldRequests(calls);
      expect(batches.length).toBe(folds.length);
      for (let i = 1; i < folds.length; i++) {
        const request = folds[i]!.request;
        expect(request.purpose === 'fold' ? request.previousSummary : undefined).toBe(batchBody(batches[i - 1]!.content));
      }
      // The requests read a placeholder for each output tier 2 chose, as the early fold predicted: the outputs tier 3
      // folds are left to its transcript rather than cleared first.
      const firstLines = folds[0]!.request.purpose === 'fold' ? folds[0]!.request.lines : [];
      expect(firstLines.some((line) => line.role === 'tool' && line.text.startsWith('[Tool output left out of this summary'))).toBe(true);
      await checkInvariants(memfold, 'orders', appended, { toolPairs: true });
    } finally {
      await memfold.close();
    }
  });

  it('stops the early requests when the rows changed before the lock, and folds the live rows as usual', async () => {
    const stages: string[] = [];
    // The second compaction's first request (the early fold's) answers only once the compaction makes a fold request
    // of its own, so it is still in flight when the compaction finds the rows changed, however slow the machine.
    let holding = false;
    const { summarizer, calls } = modelDouble(stages, { delayMs: 20, hold: (call) => holding && call === 1 });
    const memfold = await open(summarizer, stages);
    try {
      const appended = await memfold.append('orders', orderLookups(30));
      const stale = await memfold.history('orders');
      expect((await memfold.compact('orders', { force: true })).status).toBe('compacted');
      appended.push(...(await memfold.append('orders', orderLookups(30, 30))));
      calls.length = 0;
      holding = true;
      // The caller's copy predates the first compaction: the early fold predicts from it, the compaction re-plans.
      const result = await memfold.compactor.compactHistory(stale, 'orders', { force: true });
      expect(result.status, result.error).toBe('compacted');
      const wasted = calls.length - result.modelCalls;
      expect(wasted).toBeGreaterThanOrEqual(1);
      // The early requests not taken were stopped.
      expect(calls.filter((c) => c.aborted).length).toBeGreaterThanOrEqual(1);
      // What was folded is the live history: the turns appended after the stale copy are in the archive.
      const transcripts = await memfold.archive.list({ conversationId: 'orders', kind: 'transcript' });
      expect(transcripts.some((t) => t.content.includes('ORD-731'))).toBe(true);
      await checkInvariants(memfold, 'orders', appended, { toolPairs: true });
    } finally {
      await memfold.close();
    }
  });

  it('an abort reaches a request the compaction took from the early fold, whose model never answers: nothing is lost', async () => {
    const stages: string[] = [];
    // The first request (the early fold's) never answers, and its client ignores the abort.
    const { summarizer, calls } = modelDouble(stages, { delayMs: 20, hang: (call) => call === 1 });
    const memfold = await open(summarizer, stages);
    try {
      const appended = await memfold.append('orders', orderLookups(40));
      const before = await memfold.history('orders');
      const abort = new AbortController();
      const stop = memfold.compact('orders', { force: true, signal: abort.signal });
      // Aborted once the compaction reaches its fold, waiting on the early request.
      while (!stages.includes('fold')) await new Promise((resolve) => setTimeout(resolve, 5));
      abort.abort(new Error('caller gave up'));
      const result = await stop;
      // Tier 2 committed before the fold and stands; the result says why tier 3 did not.
      expect(result).toMatchObject({ status: 'compacted', tier: 2 });
      expect(result.error).toContain('caller gave up');
      expect(calls[0]!.aborted).toBe(true);
      // Tier 3 wrote nothing that stayed: every row is still live.
      const history = await memfold.history('orders');
      expect(history.map((m) => m.id)).toEqual(before.map((m) => m.id));
      await checkInvariants(memfold, 'orders', appended, { toolPairs: true });
    } finally {
      await memfold.close();
    }
  });

  it("on a conversation compacted before, builds the first request on the summary its clip-archive shows, without waiting for the archive's frontier", async () => {
    const stages: string[] = [];
    const { summarizer, calls } = modelDouble(stages, { delayMs: 20 });
    // The archive's frontier reads answer only once a request is made, or after 50 turns of the event loop: a request
    // made first did not wait for them.
    let holdLists = false;
    let callsWhenListed: number[] = [];
    const memfold = await open(summarizer, stages, async (found) => {
      for (let turn = 0; holdLists && calls.length === 0 && turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
      callsWhenListed.push(calls.length);
      return found;
    });
    try {
      const appended = await memfold.append('orders', orderLookups(30));
      expect((await memfold.compact('orders', { force: true })).status).toBe('compacted');
      appended.push(...(await memfold.append('orders', orderLookups(30, 30))));
      const frontier = await memfold.compactor.frontier('orders');
      calls.length = 0;
      callsWhenListed = [];
      holdLists = true;
      const result = await memfold.compact('orders', { force: true });
      expect(result.status, result.error).toBe('compacted');
      expect(callsWhenListed[0]).toBe(1);
      const first = foldRequests(calls)[0]!.request;
      expect(first.purpose === 'fold' ? first.previousSummary : undefined).toBe(batchBody(frontier.at(-1)!.content));
      // The prediction held: every request made was the compaction's own.
      expect(calls.length).toBe(result.modelCalls);
      await checkInvariants(memfold, 'orders', appended, { toolPairs: true });
    } finally {
      await memfold.close();
    }
  });

  it('stops the early requests when the archive holds another newest summary than the clip-archive shows', async () => {
    const stages: string[] = [];
    let holding = false;
    // The early first request answers only once the compaction makes a fold request of its own: still in flight when
    // the frontier read disagrees with the clip-archive.
    const { summarizer, calls } = modelDouble(stages, { delayMs: 20, hold: (call) => holding && call === 1 });
    let rewrite = false;
    // As if another writer had replaced the newest batch since the clip-archive was written.
    const memfold = await open(summarizer, stages, (found) =>
      rewrite && found.length > 0 ? [...found.slice(0, -1), { ...found.at(-1)!, content: `${found.at(-1)!.content} (revised)` }] : found,
    );
    try {
      const appended = await memfold.append('orders', orderLookups(30));
      expect((await memfold.compact('orders', { force: true })).status).toBe('compacted');
      appended.push(...(await memfold.append('orders', orderLookups(30, 30))));
      calls.length = 0;
      rewrite = true;
      holding = true;
      const result = await memfold.compact('orders', { force: true });
      expect(result.status, result.error).toBe('compacted');
      // The early request, built on the clip-archive's summary, was stopped and not taken; the compaction's own built
      // on the archive's.
      expect(calls[0]!.aborted).toBe(true);
      expect(calls.length - result.modelCalls).toBe(1);
      const own = foldRequests(calls)[1]!.request;
      expect(own.purpose === 'fold' ? own.previousSummary : '').toMatch(/\(revised\)$/);
      await checkInvariants(memfold, 'orders', appended, { toolPairs: true });
    } finally {
      await memfold.close();
    }
  });
});
