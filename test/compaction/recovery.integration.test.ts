/**
 * Recovery and races on real stores: interrupted operations are finished or undone by reconcile,
 * a stale history is never archived twice, the lock makes a second caller skip or wait, messages
 * appended during a compaction survive it, and the loop guard pauses automatic compaction.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import type { MemfoldEvent } from '../../src/memfold.js';
import { createMemfold } from '../../src/memfold.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { persistenceBackends } from '../support/backends.js';
import { parseLabel } from '../../src/compaction/format/labels.js';
import { checkInvariants } from '../support/invariants.js';
import { dialogue } from '../support/messages.js';
import { openStack, withFaults, type Stack } from '../support/stack.js';

const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };

const REFUSE_COMMIT = [
  `create or replace function memfold_test_refuse() returns trigger language plpgsql as $$ begin raise exception 'injected commit failure'; end $$`,
  `create trigger memfold_test_refuse before insert on messages for each row when (new.kind = 'clip_archive') execute function memfold_test_refuse()`,
];
const ALLOW_COMMIT = `drop trigger memfold_test_refuse on messages`;

for (const backend of persistenceBackends()) {
  describe(`${backend.name}: recovery, locks and the loop guard`, () => {
    let stack: Stack | undefined;
    afterEach(async () => {
      await stack?.close();
      stack = undefined;
    });

    async function seed(s: Stack, id: string, turns: number): Promise<ConversationMessage[]> {
      return s.memfold.append(id, [{ role: 'system', content: 'You are terse.' }, ...dialogue(turns)]);
    }

    /** A compaction whose commit fails and whose undo fails too: it leaves its operation pending, its rows archived. */
    async function interrupted(id: string, faults: { failUndo?: boolean }) {
      const s = stack!;
      for (const statement of REFUSE_COMMIT) await s.exec(statement);
      faults.failUndo = true;
      const result = await s.memfold.compact(id);
      faults.failUndo = false;
      await s.exec(ALLOW_COMMIT);
      expect(result).toMatchObject({ status: 'failed', failureCode: 'commit_failed' });
      const [operation] = await s.memfold.persistence.listPendingOperations(id);
      expect(operation).toMatchObject({ id: result.operationId, status: 'planned' });
      expect(operation!.error).toContain('undo incomplete');
      return operation!;
    }

    it('a failed undo leaves the operation pending; the next compaction reconciles it first', async () => {
      const faults: { failUndo?: boolean } = {};
      const events: MemfoldEvent[] = [];
      stack = await openStack(backend, { compaction: settings, wrapMemory: (m) => withFaults(m, faults), onEvent: (e) => events.push(e) });
      const appended = await seed(stack, 'conv-u', 30);
      const operation = await interrupted('conv-u', faults);
      expect((await stack.archive.list({ conversationId: 'conv-u' })).length).toBeGreaterThan(0);

      const result = await stack.memfold.compact('conv-u');
      expect(result.status).toBe('compacted');
      expect(events).toContainEqual(expect.objectContaining({ type: 'reconciled', operationId: operation.id, action: 'rolled_back' }));
      await checkInvariants(stack.memfold, 'conv-u', appended);
    });

    it('finishes an operation stopped after archiving: its messages leave the live table, the clip-archive shows its batches', async () => {
      const faults: { failUndo?: boolean } = {};
      stack = await openStack(backend, { compaction: settings, wrapMemory: (m) => withFaults(m, faults) });
      const appended = await seed(stack, 'conv-f', 30);
      const operation = await interrupted('conv-f', faults);
      // The journal as a crash between the `archived` record and the commit leaves it.
      await stack.memfold.persistence.recordOperation({ ...operation, status: 'archived' });

      const outcomes = await stack.memfold.reconcile('conv-f');
      expect(outcomes).toEqual([expect.objectContaining({ operationId: operation.id, action: 'committed' })]);
      const live = await stack.memfold.history('conv-f');
      expect(live.filter((m) => operation.messageIds.includes(m.id))).toEqual([]);
      expect(live[1]!.content.startsWith('[Context Summary')).toBe(true);
      await checkInvariants(stack.memfold, 'conv-f', appended);
      expect(await stack.memfold.reconcile('conv-f')).toEqual([]);
    });

    it('undoes an archived operation whose transcript is missing: nothing is deleted from the live table', async () => {
      const faults: { failUndo?: boolean } = {};
      stack = await openStack(backend, { compaction: settings, wrapMemory: (m) => withFaults(m, faults) });
      const appended = await seed(stack, 'conv-m', 30);
      const operation = await interrupted('conv-m', faults);
      await stack.memfold.persistence.recordOperation({ ...operation, status: 'archived' });
      const transcript = operation.labels.find((label) => parseLabel(label)?.kind === 'transcript')!;
      await stack.archive.delete('conv-m', [transcript]);

      const [outcome] = await stack.memfold.reconcile('conv-m');
      expect(outcome).toMatchObject({ action: 'rolled_back' });
      expect(outcome!.reason).toMatch(/no transcript copy/);
      expect((await stack.memfold.history('conv-m')).length).toBe(appended.length);
      expect(await stack.archive.list({ conversationId: 'conv-m' })).toEqual([]);
      await checkInvariants(stack.memfold, 'conv-m', appended);
    });

    it('reconciles every conversation of the namespace when a store opens', async () => {
      const faults: { failUndo?: boolean } = {};
      stack = await openStack(backend, { compaction: settings, wrapMemory: (m) => withFaults(m, faults) });
      const appended = await seed(stack, 'conv-o', 30);
      const operation = await interrupted('conv-o', faults);

      const events: MemfoldEvent[] = [];
      const reopened = await createMemfold({
        env: {},
        compaction: settings,
        tokens: createTokenCounter({ mode: 'chars4' }),
        persistence: stack.memfold.persistence,
        archive: stack.archive,
        onEvent: (e) => events.push(e),
      });
      expect(events).toEqual([expect.objectContaining({ type: 'reconciled', operationId: operation.id, action: 'rolled_back' })]);
      await checkInvariants(reopened, 'conv-o', appended);
    });

    it('a stale history (already compacted elsewhere) is re-planned from the live rows, never archived twice', async () => {
      stack = await openStack(backend, { compaction: settings });
      const appended = await seed(stack, 'conv-s', 30);
      const stale = await stack.memfold.history('conv-s');
      expect((await stack.memfold.compact('conv-s')).status).toBe('compacted');
      appended.push(...(await stack.memfold.append('conv-s', dialogue(20, 30))));

      const again = await stack.memfold.compactor.compactHistory(stale, 'conv-s', { force: true });
      expect(again.status).toBe('compacted');
      expect(again.history.at(-1)!.content).toContain('topic-49');
      await checkInvariants(stack.memfold, 'conv-s', appended);
    });

    it('a second caller waits for the lock when it asks to, then compacts', async () => {
      stack = await openStack(backend, { compaction: settings });
      const appended = await seed(stack, 'conv-w', 30);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const holder = stack.memfold.persistence.withConversationLock('conv-w', () => held);
      let settled = false;
      const waiting = stack.memfold.compact('conv-w', { wait: true }).finally(() => (settled = true));
      expect(await stack.memfold.compact('conv-w')).toMatchObject({ status: 'skipped', skipReason: 'busy' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled).toBe(false);
      release();
      await holder;
      expect((await waiting).status).toBe('compacted');
      await checkInvariants(stack.memfold, 'conv-w', appended);
    });

    it('more concurrent compactions than pooled connections all finish (locks never starve the work under them)', async () => {
      stack = await openStack(backend, { compaction: settings });
      const ids = Array.from({ length: 14 }, (_, i) => `conv-p${i}`);
      const appended = await Promise.all(ids.map((id) => seed(stack!, id, 30)));
      const results = await Promise.all(ids.map((id) => stack!.memfold.compact(id, { wait: true })));
      expect(results.map((r) => r.status)).toEqual(ids.map(() => 'compacted'));
      for (const [i, id] of ids.entries()) await checkInvariants(stack.memfold, id, appended[i]!);
      // 14 compactions at once: 15-50 s on a loaded 2-core machine; the bound is for a stuck lock, not for speed.
    }, 240_000);

    it('messages appended while a compaction runs are kept and appear in the next history', async () => {
      let s!: Stack;
      const late: ConversationMessage[] = [];
      const extractive = createExtractiveSummarizer();
      const model: Summarizer = {
        ...extractive,
        async summarize(request) {
          if (late.length === 0) late.push(...(await s.memfold.append('conv-a', dialogue(2, 100))));
          return extractive.summarize(request);
        },
      };
      stack = s = await openStack(backend, { compaction: settings, summarizer: model });
      const appended = await seed(stack, 'conv-a', 30);
      const result = await stack.memfold.compact('conv-a');
      expect(result.status).toBe('compacted');
      expect(late).toHaveLength(4);
      const next = await stack.memfold.history('conv-a');
      for (const m of late) expect(next).toContainEqual(m);
      await checkInvariants(stack.memfold, 'conv-a', [...appended, ...late]);
    });

    it('the loop guard pauses automatic compaction after two compactions that stay over the trigger; forced compaction still runs', async () => {
      const events: MemfoldEvent[] = [];
      stack = await openStack(backend, { compaction: settings, onEvent: (e) => events.push(e) });
      // Every message is ~600 tokens and the tail keeps 4 messages: no compaction can get under the trigger (1,600).
      const big = (turn: number): NewMessage[] => [
        { role: 'user', content: `Question ${turn}: ${'a long pasted document line '.repeat(85)}` },
        { role: 'assistant', content: `Answer ${turn}: ${'a long detailed reply sentence '.repeat(80)}` },
      ];
      const appended = await stack.memfold.append('conv-g', [0, 1, 2, 3, 4, 5].flatMap(big));
      const first = await stack.memfold.compact('conv-g');
      expect(first.status).toBe('compacted');
      expect(first.tokensAfter).toBeGreaterThanOrEqual(stack.memfold.compactor.settings.trigger);
      expect(events.some((e) => e.type === 'auto_compaction_paused')).toBe(false);

      appended.push(...(await stack.memfold.append('conv-g', big(6))));
      expect((await stack.memfold.compact('conv-g')).status).toBe('compacted');
      const paused = events.filter((e) => e.type === 'auto_compaction_paused');
      expect(paused).toEqual([expect.objectContaining({ conversationId: 'conv-g', trigger: stack.memfold.compactor.settings.trigger })]);
      expect(await stack.memfold.compactor.isPaused('conv-g')).toBe(true);

      appended.push(...(await stack.memfold.append('conv-g', big(7))));
      expect(await stack.memfold.compact('conv-g')).toMatchObject({ status: 'skipped', skipReason: 'paused' });
      expect((await stack.memfold.compact('conv-g', { force: true })).status).toBe('compacted');
      expect(await stack.memfold.compact('conv-g')).toMatchObject({ status: 'skipped' });

      await stack.memfold.compactor.resume('conv-g');
      expect(await stack.memfold.compactor.isPaused('conv-g')).toBe(false);
      appended.push(...(await stack.memfold.append('conv-g', big(8))));
      expect((await stack.memfold.compact('conv-g')).status).toBe('compacted');
      await checkInvariants(stack.memfold, 'conv-g', appended);
    });

    it('a tool call still waiting for its result at the end of history stays live with the tail', async () => {
      stack = await openStack(backend, { compaction: settings });
      const appended = await seed(stack, 'conv-t', 30);
      appended.push(
        ...(await stack.memfold.append('conv-t', [
          { role: 'user', content: 'Look up the weather.' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
        ])),
      );
      const result = await stack.memfold.compact('conv-t', { force: true });
      expect(result.status).toBe('compacted');
      expect(result.history.at(-1)!.toolCalls?.[0]?.id).toBe('call_w');
      const [result2] = await stack.memfold.append('conv-t', [{ role: 'tool', toolCallId: 'call_w', content: 'sunny' }]);
      appended.push(result2!);
      await checkInvariants(stack.memfold, 'conv-t', appended, { toolPairs: true });
    });
  });
}
