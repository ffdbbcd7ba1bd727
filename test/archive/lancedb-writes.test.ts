import { describe, expect, it } from 'vitest';
import { enqueueWrite, isCommitConflict, withConflictRetry } from '../../src/archive/lancedb/lancedb-writes.js';

const conflict = () =>
  new Error(
    'lance error: Retryable commit conflict for version 19: This Rewrite transaction was preempted by concurrent transaction Update at version 19. Please retry.',
  );

describe('write discipline', () => {
  it('recognizes LanceDB commit conflicts and nothing else', () => {
    expect(isCommitConflict(conflict())).toBe(true);
    expect(isCommitConflict(new Error('Table not found'))).toBe(false);
  });

  it('retries commit conflicts with doubling delays, then gives up with the last error', async () => {
    const delays: number[] = [];
    const sleep = async (ms: number) => {
      delays.push(ms);
    };
    let calls = 0;
    await expect(withConflictRetry(async () => (++calls < 3 ? Promise.reject(conflict()) : 'ok'), { retries: 4, baseDelayMs: 25, sleep })).resolves.toBe('ok');
    expect(delays).toEqual([25, 50]);
    calls = 0;
    await expect(
      withConflictRetry(
        async () => {
          calls++;
          throw conflict();
        },
        { retries: 2, baseDelayMs: 1, sleep },
      ),
    ).rejects.toThrow(/commit conflict/);
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      withConflictRetry(
        async () => {
          calls++;
          throw new Error('disk full');
        },
        { retries: 4, baseDelayMs: 1, sleep },
      ),
    ).rejects.toThrow('disk full');
    expect(calls).toBe(1);
  });

  it('runs writes to one table one at a time, in order, even when one fails', async () => {
    const events: string[] = [];
    const task =
      (name: string, ms: number, fail = false) =>
      async () => {
        events.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        events.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([enqueueWrite('t', task('a', 20)), enqueueWrite('t', task('b', 1, true)), enqueueWrite('t', task('c', 1))]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });
});
