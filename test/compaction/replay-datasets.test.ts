/**
 * Replays of real conversations with a small window, checking the invariants after every compaction.
 */
import { describe, expect, it } from 'vitest';
import { loadLocomo } from '../../src/eval/datasets/locomo.js';
import { loadTauBench } from '../../src/eval/datasets/tau-bench.js';
import { replayConversation } from '../../src/eval/replay.js';
import { persistenceBackends } from '../support/backends.js';
import { checkInvariants, type InvariantReport } from '../support/invariants.js';
import { LOCOMO_FILE, TAU_BENCH_EXCERPT, describeWithSharedData } from '../support/shared-data.js';
import { openStack } from '../support/stack.js';

for (const backend of persistenceBackends()) {
  describeWithSharedData(`${backend.name}: replaying LoCoMo`, () => {
    it('LoCoMo conversation 1 with a 4,000-token window keeps every invariant after every compaction', async () => {
      const [conversation] = await loadLocomo(LOCOMO_FILE);
      const stack = await openStack(backend, { compaction: { contextWindow: 4_000 } });
      try {
        const reports: InvariantReport[] = [];
        const stats = await replayConversation(stack.memfold, 'locomo-1', conversation!.messages, {
          onCompaction: async (result, appended) => {
            expect(result.status, result.error).toBe('compacted');
            reports.push(await checkInvariants(stack.memfold, 'locomo-1', appended));
          },
        });
        expect(stats.failures).toEqual([]);
        expect(stats.compactions).toBeGreaterThan(5);
        expect(stats.appended).toHaveLength(conversation!.messages.length);
        const last = await checkInvariants(stack.memfold, 'locomo-1', stats.appended);
        expect(last.archived + last.live).toBe(conversation!.messages.length);
        expect(last.archived).toBeGreaterThan(conversation!.messages.length / 2);
        expect(Math.max(...reports.map((r) => r.maxDepth))).toBeGreaterThanOrEqual(1);
        // The context stays within the window after every compaction.
        expect(stats.contextTokens).toBeLessThan(4_000);
        // Each turn carries its LoCoMo session, and the batches record the sessions they cover, in order.
        const sessions = [...new Set(conversation!.messages.map((m) => m.sessionId))];
        expect(sessions.every((id) => /^session_\d+$/.test(id!))).toBe(true);
        const recorded = (await stack.memfold.archive.list({ conversationId: 'locomo-1', kind: 'summary', depth: 0 })).flatMap((b) => b.sessions ?? []);
        const archivedSessions = [...new Set(recorded)];
        expect(archivedSessions.length).toBeGreaterThan(5);
        expect(archivedSessions).toEqual(sessions.slice(0, archivedSessions.length));
      } finally {
        await stack.close();
      }
    });
  });

  describe(`${backend.name}: replaying τ-bench runs`, () => {
    it('τ-bench runs: no tool call is ever separated from its result', async () => {
      const runs = await loadTauBench(TAU_BENCH_EXCERPT);
      const longest = [...runs].sort((a, b) => b.messages.length - a.messages.length).slice(0, 4);
      const stack = await openStack(backend, { compaction: { contextWindow: 3_000, keepRecentMessages: 2 } });
      try {
        let compactions = 0;
        for (const run of longest) {
          const id = `tau-${run.taskId}-${run.messages.length}`;
          const stats = await replayConversation(stack.memfold, id, run.messages, {
            onCompaction: async (result, appended) => {
              expect(result.status, result.error).toBe('compacted');
              const context = result.history.filter((m) => m.kind !== 'clip_archive');
              const positional = (messages: typeof context) =>
                messages.every((m, i) => m.role !== 'tool' || (i > 0 && (messages[i - 1]!.role === 'tool' || (messages[i - 1]!.toolCalls?.length ?? 0) > 0)));
              expect(positional(context), 'live context: every tool result follows its call').toBe(true);
              await checkInvariants(stack.memfold, id, appended, { toolPairs: true });
            },
          });
          compactions += stats.compactions;
        }
        expect(compactions).toBeGreaterThan(3);
      } finally {
        await stack.close();
      }
    });
  });
}
