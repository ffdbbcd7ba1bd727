/**
 * The shared rate-limit gate without a database: reservations injected (a fake store spacing slots on a fake clock,
 * as `memfold_rate_slots` does), waiting by an injected sleep or fake timers, whose clock is the only one read. It
 * asks for the limit's spacing under its key, waits what the store says, stops waiting on abort with an error saying
 * so, and turns a failed reservation into a retryable error that sends nothing. Through the queue and the retry
 * loop, each attempt, a retry included, takes a slot of its own.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemfoldError } from '../../src/errors.js';
import { createModelQueue } from '../../src/openai/openai-queue.js';
import { runQueuedWithRetry } from '../../src/openai/openai-queued-retry.js';
import { RATE_SLOT_UNAVAILABLE, rateSlotSpacingMs, sharedRateGate, type ReserveRateSlot } from '../../src/openai/shared-rate-limit.js';

/**
 * The fake timers' clock: `vi.useFakeTimers()` fakes Date along with the timers, so the times below are the ones the
 * test advances, never the machine's. Read without fake timers it throws rather than measure real time.
 */
function fakeNow(): number {
  if (!vi.isFakeTimers()) throw new Error('fakeNow() reads the fake clock: call vi.useFakeTimers() first');
  return Date.now();
}

/** What `memfold_rate_slots` does, on a clock the test moves: each reservation one spacing after the previous one. */
function fakeSlots(now: () => number) {
  const nextAt = new Map<string, number>();
  const calls: Array<{ key: string; intervalMs: number }> = [];
  const reserve: ReserveRateSlot = async (key, intervalMs) => {
    calls.push({ key, intervalMs });
    const start = Math.max(nextAt.get(key) ?? 0, now());
    nextAt.set(key, start + intervalMs);
    return start - now();
  };
  return { reserve, calls };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('rateSlotSpacingMs', () => {
  it('is 60,000 / rpm plus 2.5% for jitter, the allowance at most 10 ms', () => {
    expect(rateSlotSpacingMs(600)).toBe(102.5);
    expect(rateSlotSpacingMs(120)).toBe(510);
    expect(rateSlotSpacingMs(60)).toBe(1_010);
    expect(rateSlotSpacingMs(6)).toBe(10_010);
    expect(rateSlotSpacingMs(6_000)).toBeCloseTo(10.25, 6);
  });

  it('refuses a rate that is not an integer >= 1, naming it', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => rateSlotSpacingMs(bad)).toThrow(/requestsPerMinute/);
  });
});

describe('sharedRateGate', () => {
  it('reserves under its key with the spacing of the limit and waits what the reservation says', async () => {
    const slept: number[] = [];
    const reserve = vi.fn<ReserveRateSlot>(async () => 1234.2);
    const gate = sharedRateGate({ key: 'https://api.example/v1 key:abc', requestsPerMinute: 120, reserve, sleep: async (ms) => void slept.push(ms) });
    await gate();
    expect(reserve).toHaveBeenCalledWith('https://api.example/v1 key:abc', 510);
    // Rounded up: never sooner than the slot.
    expect(slept).toEqual([1235]);
  });

  it('does not wait when the slot is now', async () => {
    const sleep = vi.fn(async () => {});
    await sharedRateGate({ key: 'k', requestsPerMinute: 60, reserve: async () => 0, sleep })();
    expect(sleep).not.toHaveBeenCalled();
  });

  it('spaces concurrent starts by the reservations: one slot each, one spacing apart', async () => {
    vi.useFakeTimers();
    const { reserve } = fakeSlots(fakeNow);
    const gate = sharedRateGate({ key: 'k', requestsPerMinute: 120, reserve });
    const started: number[] = [];
    const t0 = fakeNow();
    const runs = Array.from({ length: 4 }, () => gate().then(() => started.push(fakeNow() - t0)));
    await vi.advanceTimersByTimeAsync(509);
    expect(started).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toEqual([0, 510]);
    await vi.advanceTimersByTimeAsync(2_000);
    await Promise.all(runs);
    expect(started).toEqual([0, 510, 1_020, 1_530]);
  });

  it('stops waiting when the signal aborts, with an error naming the wait for the shared slot', async () => {
    vi.useFakeTimers();
    const gate = sharedRateGate({ key: 'endpoint key:abc', requestsPerMinute: 1, reserve: async () => 60_000 });
    const controller = new AbortController();
    const waiting = gate(controller.signal).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort();
    const error = (await waiting) as MemfoldError;
    expect(MemfoldError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/aborted while waiting for a start slot of the shared rate limit endpoint key:abc/);
    expect(error.retryable).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not reserve for a signal already aborted', async () => {
    const reserve = vi.fn<ReserveRateSlot>(async () => 0);
    const gate = sharedRateGate({ key: 'k', requestsPerMinute: 60, reserve });
    await expect(gate(AbortSignal.abort())).rejects.toThrow(/aborted while waiting/);
    expect(reserve).not.toHaveBeenCalled();
  });

  it('turns a failed reservation into a retryable error that says the request was not sent', async () => {
    const gate = sharedRateGate({
      key: 'endpoint key:abc',
      requestsPerMinute: 60,
      reserve: async () => {
        throw new MemfoldError('persistence_error', 'Persistence failed to reserve a rate-limit slot: connection refused', { retryable: true });
      },
    });
    const error = (await gate().catch((e: unknown) => e)) as MemfoldError;
    expect(error.code).toBe('model_error');
    expect(error.retryable).toBe(true);
    expect(error.details['reason']).toBe(RATE_SLOT_UNAVAILABLE);
    expect(error.message).toMatch(/shared rate limit endpoint key:abc could not reserve a start slot, so the request was not sent: .*connection refused/);
  });
});

describe('the gate in the model queue', () => {
  it('runs in the slot before each task: the task starts only when the slot comes', async () => {
    vi.useFakeTimers();
    const { reserve } = fakeSlots(fakeNow);
    const queue = createModelQueue({ concurrency: 4, admit: sharedRateGate({ key: 'k', requestsPerMinute: 60, reserve }) });
    const started: number[] = [];
    const t0 = fakeNow();
    const tasks = [1, 2, 3].map(() => queue.run(async () => started.push(fakeNow() - t0)));
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all(tasks);
    expect(started).toEqual([0, 1_010, 2_020]);
  });

  it('drops a task whose signal aborts while its admission waits; the task never runs', async () => {
    vi.useFakeTimers();
    const queue = createModelQueue({ concurrency: 1, admit: sharedRateGate({ key: 'k', requestsPerMinute: 1, reserve: async () => 30_000 }) });
    const task = vi.fn(async () => 'sent');
    const controller = new AbortController();
    const run = queue.run(task, controller.signal).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await run).toBeInstanceOf(Error);
    expect(task).not.toHaveBeenCalled();
  });

  it('a retried attempt takes a new slot; a failed reservation is retried like a transient failure', async () => {
    vi.useFakeTimers();
    const slots = fakeSlots(fakeNow);
    let failReservation = true;
    const reserve: ReserveRateSlot = async (key, intervalMs) => {
      if (failReservation) {
        failReservation = false;
        throw new Error('connection reset');
      }
      return slots.reserve(key, intervalMs);
    };
    const queue = createModelQueue({ concurrency: 1, admit: sharedRateGate({ key: 'k', requestsPerMinute: 60, reserve }) });
    const sent: number[] = [];
    const t0 = fakeNow();
    const result = runQueuedWithRetry(
      async () => {
        sent.push(fakeNow() - t0);
        if (sent.length === 1) throw new MemfoldError('model_error', 'http 503', { retryable: true, details: { reason: 'http 503', status: 503 } });
        return 'summary';
      },
      { queue, id: 'openai:test', errorCode: 'model_error', maxRetries: 3, retry: { initialDelayMs: 1, maxDelayMs: 1, random: () => 0 } },
    );
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await result).toBe('summary');
    // The first reservation failed (nothing sent), then two attempts, each with a slot one spacing after the last.
    expect(slots.calls).toHaveLength(2);
    expect(sent).toEqual([0, 1_010]);
  });

  it('a 429 keeps its slot for one retry after the wait the provider asks; a second 429 reserves again', async () => {
    vi.useFakeTimers();
    const slots = fakeSlots(fakeNow);
    const queue = createModelQueue({ concurrency: 1, admit: sharedRateGate({ key: 'k', requestsPerMinute: 60, reserve: slots.reserve }) });
    const tooSoon = (waitMs: number) =>
      new MemfoldError('model_error', 'http 429', { retryable: true, details: { reason: 'http 429', status: 429, retryAfterMs: waitMs } });
    const sent: number[] = [];
    const t0 = fakeNow();
    const result = runQueuedWithRetry(
      async () => {
        sent.push(fakeNow() - t0);
        if (sent.length <= 2) throw tooSoon(40);
        return 'summary';
      },
      { queue, id: 'openai:test', errorCode: 'model_error', maxRetries: 3, retry: { initialDelayMs: 1, maxDelayMs: 5_000, random: () => 0 } },
    );
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await result).toBe('summary');
    // Slot at 0; the first 429's retry goes 40 ms later in the same slot; the second's waits 40 ms, then for the next slot.
    expect(sent).toEqual([0, 40, 1_010]);
    expect(slots.calls).toHaveLength(2);
  });
});
