import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import { persistenceBackends } from '../support/backends.js';
import { dialogue as conversation } from '../support/messages.js';
import { checkInvariants } from '../support/invariants.js';
import { openStack, withFaults, type Stack } from '../support/stack.js';

const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };

for (const backend of persistenceBackends()) {
  describe(`${backend.name}: compactor on real stores`, () => {
    let stack: Stack | undefined;
    afterEach(async () => {
      await stack?.close();
      stack = undefined;
    });

    async function seed(s: Stack, id: string, turns: number): Promise<ConversationMessage[]> {
      return s.memfold.append(id, [{ role: 'system', content: 'You are terse.' }, ...conversation(turns)]);
    }

    it('archives the middle, keeps head and tail, and returns the context with the clip-archive', async () => {
      stack = await openStack(backend, { compaction: settings });
      const appended = await seed(stack, 'conv-a', 30);
      const result = await stack.memfold.compact('conv-a');
      expect(result).toMatchObject({ status: 'compacted' });
      expect(result.archivedMessages).toBeGreaterThan(20);
      expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
      expect(result.tokensAfter).toBeLessThan(stack.memfold.compactor.settings.trigger);
      expect(result.history[0]!.content).toBe('You are terse.');
      expect(result.history[1]!.content.startsWith('[Context Summary')).toBe(true);
      expect(result.history[2]!.content).toContain('Turn 0');
      expect(result.history.at(-1)!.content).toContain('topic-29');
      expect(await stack.memfold.context('conv-a')).toEqual(result.history);
      await checkInvariants(stack.memfold, 'conv-a', appended.slice(1).concat(appended[0]!));
    });

    it('the summarizer reads every compacted message whole: no request is cut when no message exceeds a chunk', async () => {
      const requests: string[] = [];
      const extractive = createExtractiveSummarizer();
      const model: Summarizer = {
        ...extractive,
        summarize: (request) => {
          requests.push(request.purpose === 'fold' ? request.lines.map((line) => line.text).join('\n') : request.summaries.join('\n'));
          return extractive.summarize(request);
        },
      };
      stack = await openStack(backend, { compaction: settings, summarizer: model });
      // Short messages: the date and speaker each transcript line adds weigh more than the text itself.
      const short = Array.from({ length: 400 }, (_, i) => ({ role: i % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `note ${i} ok` }));
      await stack.memfold.append('conv-r', short);
      const result = await stack.memfold.compact('conv-r');
      expect(result.status).toBe('compacted');
      expect(requests.length).toBeGreaterThan(1);
      for (const request of requests) expect(request).not.toContain('cut for the summarizer');
      const archived = (await stack.archive.list({ conversationId: 'conv-r', kind: 'transcript' })).flatMap((t) => t.messages ?? []);
      for (const m of archived)
        expect(
          requests.some((r) => r.includes(m.content)),
          `message ${m.seq} reached no summarizer request`,
        ).toBe(true);
    });

    it('skips below the trigger and compacts anyway when forced', async () => {
      stack = await openStack(backend, { compaction: settings });
      await seed(stack, 'small', 6);
      expect(await stack.memfold.compact('small')).toMatchObject({ status: 'skipped', skipReason: 'below_trigger' });
      expect(await stack.memfold.compact('small', { force: true })).toMatchObject({ status: 'compacted' });
    });

    it('re-summarizes into higher depths when the frontier grows, children stay searchable', async () => {
      stack = await openStack(backend, { compaction: settings });
      const appended = await seed(stack, 'deep', 10);
      for (let round = 1; round <= 8; round++) {
        appended.push(...(await stack.memfold.append('deep', conversation(10, round * 10))));
        const result = await stack.memfold.compact('deep');
        expect(result.status, result.error).toBe('compacted');
      }
      const report = await checkInvariants(stack.memfold, 'deep', appended);
      expect(report.maxDepth).toBeGreaterThanOrEqual(1);
      const frontier = await stack.memfold.compactor.frontier('deep');
      const { clipFirst, clipLast, clipBuffer } = stack.memfold.compactor.settings;
      expect(frontier.length).toBeLessThanOrEqual(clipFirst + clipLast + clipBuffer);
      const marked = (await stack.memfold.archive.list({ conversationId: 'deep', kind: 'summary', depth: 0 })).filter((b) => b.parentLabel);
      expect(marked.length).toBeGreaterThan(0);
      const hit = await stack.memfold.memoryRead('deep').execute({ query: 'topic-12 1012' });
      expect(hit.ok).toBe(true);
      expect(hit.output).toContain('topic-12');
    });

    it('a failed archive write leaves live rows and the returned history exactly as they were', async () => {
      const faults = { failWrite: false };
      stack = await openStack(backend, { compaction: settings, wrapMemory: (m) => withFaults(m, faults) });
      await seed(stack, 'conv-f', 30);
      const before = await stack.memfold.history('conv-f');
      faults.failWrite = true;
      const result = await stack.memfold.compact('conv-f');
      expect(result).toMatchObject({ status: 'failed', failureCode: 'archive_failed' });
      expect(result.error).toContain('injected archive write failure');
      expect(result.history).toEqual(before);
      expect(await stack.memfold.history('conv-f')).toEqual(before);
      expect(await stack.archive.list({ conversationId: 'conv-f' })).toEqual([]);
      const operations = await stack.memfold.persistence.listOperations('conv-f');
      expect(operations.map((o) => o.status)).toEqual(['rolled_back']);
    });

    it('archives and re-summarizes beside the fold: the transcript, the first batches and the first depth-1 request come before the last summary; a batch write that fails stops the fold', async () => {
      const extractive = createExtractiveSummarizer();
      let calls = 0;
      /** At each summarizer call: the transcript segments and the batches already stored. */
      const stored: Array<{ transcripts: number; batches: number }> = [];
      const purposes: string[] = [];
      let writes = 0;
      let failAtWrite = Number.POSITIVE_INFINITY;
      let foldCalls = 0;
      // Settles when archive write k (1-based, from the last reset) has, succeeded or failed.
      let settled: Array<Promise<void>> = [];
      let settle: Array<() => void> = [];
      const writeSettled = (k: number) => (settled[k] ??= new Promise<void>((resolve) => (settle[k] = resolve)));
      const model: Summarizer = {
        ...extractive,
        async summarize(request) {
          calls++;
          purposes.push(request.purpose);
          const entries = await stack!.archive.list({ conversationId: current });
          stored.push({ transcripts: entries.filter((e) => e.kind === 'transcript').length, batches: entries.filter((e) => e.kind === 'summary').length });
          // Fold call k answers once archive write k has settled (write 1 the transcript, write k the batch of call
          // k - 1): each batch is written alone, in order, however long a write takes, so which write fails decides
          // how many calls are made. A call stops when the compaction stops it.
          if (request.purpose === 'fold') {
            const k = ++foldCalls;
            await new Promise((resolve, reject) => {
              void writeSettled(k).then(resolve);
              // The compaction may have stopped the call already (while the list above was read): an abort event
              // fired before this listener is never heard again.
              if (request.signal?.aborted) return reject(request.signal.reason);
              request.signal?.addEventListener('abort', () => reject(request.signal!.reason), { once: true });
            });
            // An answer that came at the very moment its write failed would tie with the failure: the model answers a
            // turn of the event loop later, once the failure (promise callbacks alone) has stopped the fold or not.
            await new Promise((resolve) => setImmediate(resolve));
            if (request.signal?.aborted) throw request.signal.reason;
          }
          return extractive.summarize(request);
        },
      };
      let current = 'conv-ok';
      stack = await openStack(backend, {
        compaction: settings,
        summarizer: model,
        wrapMemory: (memory) => ({
          ...memory,
          async write(entries) {
            const k = ++writes;
            try {
              if (k === failAtWrite) throw new Error('injected failure of a batch write');
              await memory.write(entries);
            } finally {
              void writeSettled(k);
              settle[k]!();
            }
          },
        }),
      });
      await seed(stack, 'conv-ok', 60);
      const ok = await stack.memfold.compact('conv-ok');
      expect(ok.status, ok.error).toBe('compacted');
      expect(ok.batches.length).toBeGreaterThan(6);
      // Seven new batches overflow the frontier (2 + 2 + 2): the first run is decided before the last chunk is folded.
      expect(ok.resummarized.length).toBeGreaterThan(0);
      expect(purposes.indexOf('resummarize')).toBeGreaterThan(0);
      expect(purposes.indexOf('resummarize')).toBeLessThan(purposes.lastIndexOf('fold'));
      // The last chunk's request (the fold's last call) finds every segment and the earlier batches stored.
      const segments = (await stack.archive.list({ conversationId: 'conv-ok', kind: 'transcript' })).length;
      const lastFold = stored[purposes.lastIndexOf('fold')]!;
      expect(lastFold.transcripts).toBe(segments);
      expect(lastFold.batches).toBeGreaterThanOrEqual(1);

      current = 'conv-stop';
      await seed(stack, current, 60);
      const before = await stack.memfold.history(current);
      calls = 0;
      writes = 0;
      foldCalls = 0;
      settled = [];
      settle = [];
      // Write 1 is the transcript, 2 the first batch, 3 the second: it fails while the third summary is on its way.
      failAtWrite = 3;
      const failed = await stack.memfold.compact(current);
      expect(failed).toMatchObject({ status: 'failed', failureCode: 'archive_failed' });
      expect(failed.error).toContain('injected failure of a batch write');
      expect(calls).toBeLessThanOrEqual(3);
      expect(await stack.memfold.history(current)).toEqual(before);
      expect(await stack.archive.list({ conversationId: current })).toEqual([]);
      expect((await stack.memfold.persistence.listOperations(current)).map((o) => o.status)).toEqual(['rolled_back']);
    });

    it('batches whose summaries arrive while a write is in flight are written together: one write and read-back for all', async () => {
      const writes: Array<{ kinds: string[] }> = [];
      stack = await openStack(backend, {
        compaction: settings,
        wrapMemory: (memory) => ({
          ...memory,
          async write(entries) {
            writes.push({ kinds: [...new Set(entries.map((e) => e.kind))] });
            // The transcript's write is slow: every summary of the offline summarizer arrives meanwhile.
            if (writes.length === 1) await new Promise((resolve) => setTimeout(resolve, 100));
            await memory.write(entries);
          },
        }),
      });
      const appended = await seed(stack, 'conv-burst', 60);
      const result = await stack.memfold.compact('conv-burst');
      expect(result.status, result.error).toBe('compacted');
      const depth0 = result.batches.filter((b) => b.depth === 0);
      expect(depth0.length).toBeGreaterThan(3);
      // The transcript segments, then every depth-0 batch at once (then any re-summarized batch).
      expect(writes[0]!.kinds).toEqual(['transcript']);
      expect(writes[1]!.kinds).toEqual(['summary']);
      expect(writes.filter((w) => w.kinds.includes('summary')).length).toBeLessThan(depth0.length);
      const stored = await stack.archive.list({ conversationId: 'conv-burst', kind: 'summary' });
      for (const batch of depth0) expect(stored.find((e) => e.label === batch.label)?.content).toBe(batch.content);
      await checkInvariants(stack.memfold, 'conv-burst', appended.slice(1).concat(appended[0]!));
    });

    it('a write that stored rows and then failed is undone: nothing stays archived', async () => {
      stack = await openStack(backend, { compaction: settings, wrapMemory: (m) => withFaults(m, { failWriteAfterStoring: true }) });
      await seed(stack, 'conv-p', 30);
      const before = await stack.memfold.history('conv-p');
      const result = await stack.memfold.compact('conv-p');
      expect(result.failureCode).toBe('archive_failed');
      expect(await stack.memfold.history('conv-p')).toEqual(before);
      expect(await stack.archive.list({ conversationId: 'conv-p' })).toEqual([]);
    });

    it('a read-back that differs from what was written stops the compaction before any delete', async () => {
      stack = await openStack(backend, { compaction: settings, wrapMemory: (m) => withFaults(m, { corruptRead: true }) });
      await seed(stack, 'conv-r', 30);
      const before = await stack.memfold.history('conv-r');
      const result = await stack.memfold.compact('conv-r');
      expect(result.failureCode).toBe('readback_failed');
      expect(await stack.memfold.history('conv-r')).toEqual(before);
      expect(await stack.archive.list({ conversationId: 'conv-r' })).toEqual([]);
    });

    it('a failing commit rolls back its deletes and the archive writes', async () => {
      stack = await openStack(backend, { compaction: settings });
      await seed(stack, 'conv-c', 30);
      const before = await stack.memfold.history('conv-c');
      // A real database error inside the commit transaction: refuse the clip-archive row, after the deletes ran.
      await stack.exec(
        `create or replace function memfold_test_refuse() returns trigger language plpgsql as $$ begin raise exception 'injected commit failure'; end $$`,
      );
      await stack.exec(
        `create trigger memfold_test_refuse before insert on messages for each row when (new.kind = 'clip_archive') execute function memfold_test_refuse()`,
      );
      const result = await stack.memfold.compact('conv-c');
      expect(result).toMatchObject({ status: 'failed', failureCode: 'commit_failed' });
      expect(result.error).toContain('injected commit failure');
      expect(result.history).toEqual(before);
      expect(await stack.memfold.history('conv-c')).toEqual(before);
      expect(await stack.archive.list({ conversationId: 'conv-c' })).toEqual([]);
    });

    it('a second compaction of the same conversation is skipped as busy while the first holds it', async () => {
      stack = await openStack(backend, { compaction: settings });
      await seed(stack, 'conv-l', 30);
      const s = stack;
      const inner = await s.memfold.persistence.withConversationLock('conv-l', () => s.memfold.compact('conv-l'));
      expect(inner).toMatchObject({ acquired: true, value: { status: 'skipped', skipReason: 'busy' } });
      expect(await s.memfold.compact('conv-l')).toMatchObject({ status: 'compacted' });
    });

    it("memory_read cannot return another conversation's archive, whatever its arguments", async () => {
      stack = await openStack(backend, { compaction: settings });
      await seed(stack, 'alice', 30);
      await stack.memfold.append('bob', conversation(30, 500));
      expect((await stack.memfold.compact('alice')).status).toBe('compacted');
      expect((await stack.memfold.compact('bob')).status).toBe('compacted');
      const bobLabels = (await stack.memfold.archive.list({ conversationId: 'bob' })).map((e) => e.label);
      const tool = stack.memfold.memoryRead('alice');
      const attempts: unknown[] = [
        { query: 'topic-505 2505' },
        { query: "topic-505' OR conversation_id = 'bob" },
        { query: 'topic-505', conversationId: 'bob' },
        { query: 'topic-505', kind: 'transcript', limit: 20 },
        JSON.stringify({ query: 'topic-505 OR 1=1' }),
      ];
      for (const args of attempts) {
        const result = await tool.execute(args);
        expect(result.output).not.toMatch(/item 25\d\d|number 15\d\d/);
        for (const label of bobLabels) expect(result.output).not.toContain(label);
      }
      for (const label of bobLabels) {
        expect(await tool.execute({ label })).toMatchObject({ ok: false, error: 'not_found' });
      }
      expect((await tool.execute({ query: 'topic-5', conversationId: 'bob' })).error).toContain('conversationId');
      expect((await stack.memfold.memoryRead('bob').execute({ query: 'topic-505 2505' })).output).toContain('topic-505');
    });
  });
}
