/** The in-process background queue: one job waiting per conversation, retries of a failed compaction, a bounded close. */
import { expect, it } from 'vitest';
import { createInProcessQueue } from '../../src/background/in-process-queue.js';
import type { JobOutcome } from '../../src/background/compaction-queue.js';
import type { CompactionResult } from '../../src/compaction/compaction-result.js';

const result = (status: CompactionResult['status']) =>
  ({
    status,
    fallbacks: [] as CompactionResult['fallbacks'],
    modelCalls: 3,
    tokensBefore: 100,
    tokensAfter: status === 'compacted' ? 40 : 100,
    ...(status === 'failed' ? { failureCode: 'archive_failed', error: 'down' } : {}),
  }) as CompactionResult;

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

it('a burst for one conversation queues one job while it waits; another conversation gets its own', async () => {
  const started: string[] = [];
  const release = gate();
  const queue = createInProcessQueue(async (id) => {
    started.push(id);
    await release.opened;
    return result('compacted');
  });
  const first = await queue.enqueue('a');
  // 'a' is running now: one more may wait behind it, no more.
  const burst = await Promise.all([queue.enqueue('a'), queue.enqueue('a'), queue.enqueue('b')]);
  expect(first.queued).toBe(true);
  expect(burst.map((r) => r.queued)).toEqual([true, false, true]);
  release.open();
  await queue.close(5_000);
  expect(started).toEqual(['a', 'a', 'b']);
});

it('retries a failed compaction with a doubling delay, then reports the last outcome', async () => {
  const outcomes: JobOutcome[] = [];
  const delays: number[] = [];
  let calls = 0;
  const queue = createInProcessQueue(async () => (++calls < 3 ? result('failed') : result('compacted')), {
    retryDelayMs: 100,
    sleep: async (ms) => void delays.push(ms),
    onOutcome: (o) => outcomes.push(o),
  });
  await queue.enqueue('a');
  await queue.close(5_000);
  expect(delays).toEqual([100, 200]);
  expect(outcomes).toEqual([expect.objectContaining({ conversationId: 'a', status: 'compacted', attempt: 2, fallbacks: 0, modelCalls: 3 })]);

  const failing = createInProcessQueue(async () => result('failed'), { retryLimit: 1, sleep: async () => undefined, onOutcome: (o) => outcomes.push(o) });
  await failing.enqueue('b');
  await failing.close(5_000);
  expect(outcomes.at(-1)).toMatchObject({ conversationId: 'b', status: 'failed', failureCode: 'archive_failed', attempt: 1 });
});

it('close waits for the jobs at most waitMs (its timer), and queues nothing after', async () => {
  const timer = gate();
  const asked: number[] = [];
  const queue = createInProcessQueue(() => new Promise<CompactionResult>(() => undefined), {
    closeTimer: (ms) => {
      asked.push(ms);
      return timer.opened;
    },
  });
  await queue.enqueue('a');
  let closed = false;
  const closing = queue.close(50).then(() => (closed = true));
  await new Promise((resolve) => setImmediate(resolve));
  // The job never ends: close waits for the timer it set to waitMs, not longer.
  expect(asked).toEqual([50]);
  expect(closed).toBe(false);
  timer.open();
  await closing;
  expect((await queue.enqueue('b')).queued).toBe(false);
});

it('close returns when the jobs are done, and stops its timer', async () => {
  const release = gate();
  let timerSignal: AbortSignal | undefined;
  const queue = createInProcessQueue(
    async () => {
      await release.opened;
      return result('compacted');
    },
    {
      closeTimer: (_ms, signal) => {
        timerSignal = signal;
        return new Promise<void>(() => undefined);
      },
    },
  );
  await queue.enqueue('a');
  const closing = queue.close(60_000);
  release.open();
  await closing;
  // Stopped: a pending timer would keep the process alive for the rest of waitMs.
  expect(timerSignal?.aborted).toBe(true);
});

it('does not retry a failure a model or embedding client already retried (one retry loop per call path)', async () => {
  const outcomes: JobOutcome[] = [];
  let calls = 0;
  const queue = createInProcessQueue(async () => (++calls, { ...result('failed'), clientAttempts: 3 }), {
    sleep: async () => undefined,
    onOutcome: (o) => outcomes.push(o),
  });
  await queue.enqueue('a');
  await queue.close(5_000);
  expect(calls).toBe(1);
  expect(outcomes).toEqual([expect.objectContaining({ status: 'failed', attempt: 0, clientAttempts: 3 })]);
});
