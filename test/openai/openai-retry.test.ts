import { describe, expect, it } from 'vitest';
import { MemfoldError } from '../../src/errors.js';
import { deadlineExceeded, retryAfterMs, retryWithBackoff, type RetryOptions } from '../../src/openai/openai-retry.js';

function fakeTime(random = 0.5) {
  let now = 1_000;
  const sleeps: number[] = [];
  const options: Pick<RetryOptions, 'sleep' | 'clock' | 'random'> = {
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    clock: () => now,
    random: () => random,
  };
  return { options, sleeps, advance: (ms: number) => (now += ms) };
}

const retryable = (reason = 'http 500', details: Record<string, unknown> = {}) =>
  new MemfoldError('model_error', `boom ${reason}`, { retryable: true, details: { reason, ...details } });

describe('retryWithBackoff', () => {
  it('returns the first success without sleeping', async () => {
    const t = fakeTime();
    const result = await retryWithBackoff(async () => 'ok', { maxRetries: 3, initialDelayMs: 100, maxDelayMs: 1000, ...t.options });
    expect(result).toBe('ok');
    expect(t.sleeps).toEqual([]);
  });

  it('backs off exponentially with full jitter, capped by maxDelayMs', async () => {
    const t = fakeTime(0.999);
    let calls = 0;
    await expect(
      retryWithBackoff(
        async () => {
          calls++;
          throw retryable();
        },
        { maxRetries: 5, initialDelayMs: 100, maxDelayMs: 500, ...t.options },
      ),
    ).rejects.toThrow(/failed after 6 attempts \(retries exhausted\)/);
    expect(calls).toBe(6);
    // random() = 0.999 of 100, 200, 400, 500 (cap), 500
    expect(t.sleeps).toEqual([99, 199, 399, 499, 499]);
  });

  it('jitter stays within [0, bound): random() = 0 gives no wait', async () => {
    const t = fakeTime(0);
    await expect(
      retryWithBackoff(
        async () => {
          throw retryable();
        },
        { maxRetries: 2, initialDelayMs: 100, maxDelayMs: 1000, ...t.options },
      ),
    ).rejects.toThrow();
    expect(t.sleeps).toEqual([0, 0]);
  });

  it('keeps every attempt in details.attempts and the last reason', async () => {
    const t = fakeTime();
    let n = 0;
    const error = await retryWithBackoff(
      async () => {
        n++;
        throw retryable(n < 3 ? 'http 503' : 'timeout');
      },
      { maxRetries: 2, initialDelayMs: 10, maxDelayMs: 100, ...t.options },
    ).catch((e: unknown) => e);
    expect(MemfoldError.isInstance(error)).toBe(true);
    const e = error as MemfoldError;
    expect(e.code).toBe('model_error');
    expect(e.retryable).toBe(false);
    expect(e.details['reason']).toBe('timeout');
    const attempts = e.details['attempts'] as Array<{ attempt: number; message: string; reason: string }>;
    expect(attempts.map((a) => [a.attempt, a.reason])).toEqual([
      [1, 'http 503'],
      [2, 'http 503'],
      [3, 'timeout'],
    ]);
    expect(attempts[0]!.message).toContain('boom http 503');
  });

  it('does not retry an error that is not marked retryable', async () => {
    const t = fakeTime();
    let calls = 0;
    const error = (await retryWithBackoff(
      async () => {
        calls++;
        throw new MemfoldError('model_error', 'bad request', { retryable: false, details: { reason: 'http 400', status: 400 } });
      },
      { maxRetries: 5, initialDelayMs: 10, maxDelayMs: 100, ...t.options },
    ).catch((e: unknown) => e)) as MemfoldError;
    expect(calls).toBe(1);
    expect(error.details['status']).toBe(400);
    expect(error.message).toMatch(/not retryable/);
  });

  it('treats a plain Error as not retryable', async () => {
    let calls = 0;
    await expect(
      retryWithBackoff(
        async () => {
          calls++;
          throw new Error('x');
        },
        { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 1, ...fakeTime().options },
      ),
    ).rejects.toThrow();
    expect(calls).toBe(1);
  });

  it('honours retry-after (seconds) and retry-after-ms, capped by maxDelayMs', async () => {
    const t = fakeTime();
    let n = 0;
    const result = await retryWithBackoff(
      async () => {
        n++;
        if (n === 1) throw retryable('http 429', { headers: { 'retry-after': '2' } });
        if (n === 2) throw retryable('http 429', { headers: { 'retry-after-ms': '750' } });
        if (n === 3) throw retryable('http 429', { headers: { 'retry-after': '3600' } });
        return n;
      },
      { maxRetries: 5, initialDelayMs: 10, maxDelayMs: 5_000, ...t.options },
    );
    expect(result).toBe(4);
    expect(t.sleeps).toEqual([2_000, 750, 5_000]);
  });

  it('gives refusals that name their wait (429 with retry-after) up to EXTRA_RATE_LIMIT_RETRIES more; other failures keep maxRetries', async () => {
    const paced = (wait: string) => retryable('http 429', { status: 429, headers: { 'retry-after-ms': wait } });
    const run = async (failures: Array<() => MemfoldError>, maxRetries: number) => {
      let n = 0;
      const t = fakeTime();
      try {
        return await retryWithBackoff(
          async () => {
            const fail = failures[n++];
            if (fail) throw fail();
            return `answered on attempt ${n}`;
          },
          { maxRetries, initialDelayMs: 10, maxDelayMs: 5_000, ...t.options },
        );
      } catch (error) {
        return `gave up after ${n}: ${(error as MemfoldError).details['stoppedBy']}`;
      }
    };
    // Six refusals in a row: with 2 retries the call used to give up after the third.
    expect(
      await run(
        Array.from({ length: 6 }, () => () => paced('50')),
        2,
      ),
    ).toBe('answered on attempt 7');
    expect(
      await run(
        Array.from({ length: 9 }, () => () => paced('50')),
        2,
      ),
    ).toBe('gave up after 7: retries exhausted');
    // A refusal without a wait, or a server error, counts as any failure does.
    const unpaced = () => retryable('http 429', { status: 429 });
    expect(await run([unpaced, unpaced, unpaced], 2)).toBe('gave up after 3: retries exhausted');
    expect(await run([() => paced('50'), () => retryable('http 500'), () => retryable('http 500'), () => retryable('http 500')], 2)).toBe(
      'gave up after 4: retries exhausted',
    );
    // No retries asked for, none given.
    expect(await run([() => paced('50')], 0)).toBe('gave up after 1: retries exhausted');
  });

  it('reads retry-after as an HTTP date against the clock', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    expect(retryAfterMs({ details: { headers: { 'retry-after': 'Mon, 01 Jan 2024 00:00:03 GMT' } } }, now)).toBe(3_000);
    expect(retryAfterMs({ details: {} }, now)).toBeUndefined();
  });

  it('stops at the deadline instead of sleeping past it', async () => {
    const t = fakeTime(0.999);
    let calls = 0;
    const error = (await retryWithBackoff(
      async () => {
        calls++;
        t.advance(300); // each attempt takes 300 ms
        throw retryable();
      },
      { maxRetries: 10, initialDelayMs: 200, maxDelayMs: 10_000, deadlineMs: 1_000, ...t.options },
    ).catch((e: unknown) => e)) as MemfoldError;
    // 300 + 199 | 300 + 399 = 1198 >= 1000: stop before the third attempt
    expect(calls).toBe(2);
    expect(error.details['stoppedBy']).toBe('deadline');
    expect(t.sleeps).toEqual([199]);
  });

  it('tells each attempt the time left and reports the deadline with the last reason', async () => {
    const t = fakeTime(0.999);
    const left: number[] = [];
    const error = (await retryWithBackoff(
      async (_attempt, remainingMs) => {
        left.push(remainingMs());
        t.advance(300);
        throw retryable('http 503');
      },
      { maxRetries: 10, initialDelayMs: 200, maxDelayMs: 10_000, deadlineMs: 1_000, ...t.options },
    ).catch((e: unknown) => e)) as MemfoldError;
    expect(left).toEqual([1_000, 501]);
    expect(error.details['reason']).toBe('deadline exceeded (http 503)');
    expect(error.message).toMatch(/\(deadline\)/);
  });

  it('tells attempts the time left is Infinity without a deadline', async () => {
    let left = 0;
    await retryWithBackoff(async (_attempt, remainingMs) => (left = remainingMs()), { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1 });
    expect(left).toBe(Infinity);
  });

  it('counts an attempt that found no time left as stopped by the deadline', async () => {
    const error = (await retryWithBackoff(
      async () => {
        throw deadlineExceeded('model_error', 'm');
      },
      { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 1, ...fakeTime().options },
    ).catch((e: unknown) => e)) as MemfoldError;
    expect(error.details['stoppedBy']).toBe('deadline');
    expect(error.details['reason']).toBe('deadline exceeded');
  });

  it('stops when the signal aborts during the backoff', async () => {
    const controller = new AbortController();
    let calls = 0;
    const error = (await retryWithBackoff(
      async () => {
        calls++;
        throw retryable();
      },
      {
        maxRetries: 5,
        initialDelayMs: 10,
        maxDelayMs: 100,
        signal: controller.signal,
        sleep: async () => {
          controller.abort();
          throw new Error('aborted while sleeping');
        },
      },
    ).catch((e: unknown) => e)) as MemfoldError;
    expect(calls).toBe(1);
    expect(error.details['stoppedBy']).toBe('aborted');
  });

  it('uses the given error code', async () => {
    const error = (await retryWithBackoff(
      async () => {
        throw retryable();
      },
      { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1, errorCode: 'embedding_error', ...fakeTime().options },
    ).catch((e: unknown) => e)) as MemfoldError;
    expect(error.code).toBe('embedding_error');
  });
});
