/**
 * The model queue learns its pace from the server's 429s. 48 summaries through a queue of 16 against a limit of
 * 20 requests a second (a token bucket of 20, as the latency bench's server): without a pace, the requests the
 * bucket refuses are all told the same short wait, come back together, are refused again and spend their 2 retries,
 * so the fallback writes their summaries. With it, the queue holds every start for the wait and then spaces them.
 *
 * No test here depends on the machine's speed: the clock is virtual. Every wait (the server's latency, the retry's
 * backoff, the queue's pace) is a timer of one scheduler, fired in time order once the event loop has nothing left;
 * the virtual clock stands still while work waits on I/O.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MemfoldError } from '../../src/errors.js';
import { createPacing, MAX_LEARNED_INTERVAL_MS } from '../../src/openai/openai-pacing.js';
import { createModelQueue } from '../../src/openai/openai-queue.js';
import { createOpenAISummarizer } from '../../src/openai/openai-summarizer.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import { withFallback } from '../../src/summarizer/with-fallback.js';
import type { SummarizeRequest } from '../../src/summarizer/summarizer.js';

const LATENCY_MS = 200;
const PER_SECOND = 20;

/** Virtual time: `sleep` queues a timer, `run` fires them in order whenever nothing else is left to do. */
function virtualTime() {
  let now = 0;
  const timers: Array<{ at: number; seq: number; resolve: () => void }> = [];
  let seq = 0;
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  return {
    clock: () => now,
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        timers.push({ at: now + Math.max(0, ms), seq: seq++, resolve });
      }),
    async run<T>(work: Promise<T>): Promise<T> {
      let done = false;
      let ioWaits = 0;
      void work.finally(() => void (done = true)).catch(() => {});
      for (;;) {
        await settle();
        if (done) return work;
        timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
        const next = timers.shift();
        if (!next && ioWaits++ < 1_000) {
          // Work waiting on I/O (a module loaded on first use): the virtual clock stands still meanwhile.
          await new Promise((resolve) => setTimeout(resolve, 10));
          continue;
        }
        ioWaits = 0;
        if (!next) throw new Error(`stalled at ${now} ms: no timer left and the work is not done`);
        now = Math.max(now, next.at);
        next.resolve();
      }
    },
  };
}

/** A chat endpoint with a token bucket on the virtual clock: a refused request gets 429 and the ms to its next token. */
function bucketEndpoint(time: ReturnType<typeof virtualTime>) {
  const perMs = PER_SECOND / 1000;
  let tokens = PER_SECOND;
  let last = 0;
  const counts = { requests: 0, refused: 0 };
  const send = (async () => {
    counts.requests++;
    const t = time.clock();
    tokens = Math.min(PER_SECOND, tokens + (t - last) * perMs);
    last = t;
    if (tokens < 1) {
      counts.refused++;
      const waitMs = Math.ceil((1 - tokens) / perMs);
      return new Response(JSON.stringify({ error: { message: 'rate limited' } }), {
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after-ms': String(waitMs), 'retry-after': String(Math.ceil(waitMs / 1000)) },
      });
    }
    tokens -= 1;
    await time.sleep(LATENCY_MS);
    const body = {
      id: 'chatcmpl-bucket',
      object: 'chat.completion',
      created: 0,
      model: 'fake',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Summary: flight HAT069 booked.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 },
    };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { fetch: send, counts };
}

const request = (i: number): SummarizeRequest => ({
  purpose: 'fold',
  lines: [{ time: '2024-05-15T10:00:00.000Z', role: 'user', text: `please book flight HAT0${i} to Seattle for $121` }],
  maxOutputTokens: 200,
});

async function summarizeAtOnce(summaries: number, pacing: boolean) {
  const time = virtualTime();
  const endpoint = bucketEndpoint(time);
  const injected = { clock: time.clock, sleep: time.sleep };
  const queue = createModelQueue({ concurrency: 16, pacing: pacing ? injected : false });
  const remote = createOpenAISummarizer({
    baseURL: 'http://bucket.invalid/v1',
    model: 'fake',
    timeoutMs: 600_000,
    maxRetries: 2,
    queue,
    fetch: endpoint.fetch,
    retry: { ...injected, random: () => 0.5 },
  });
  const model = withFallback(remote, createExtractiveSummarizer());
  const answers = await time.run(Promise.all(Array.from({ length: summaries }, (_, i) => model.summarize(request(i)))));
  return { fallbacks: answers.filter((a) => a.fallback).length, ...endpoint.counts, elapsedMs: time.clock() };
}

describe('a queue with no rate of its own learns one from 429s', () => {
  // Loads what the first summary and the first fallback load on first use, so no run waits on I/O mid-way.
  beforeAll(async () => {
    await summarizeAtOnce(1, false);
    await createExtractiveSummarizer().summarize(request(0));
  });

  it('without it, the refused come back together and spend their retries (what the pace prevents)', async () => {
    const run = await summarizeAtOnce(48, false);
    expect(run.fallbacks).toBeGreaterThan(0);
  });

  it('with it, every summary comes from the model, with fewer 429s, near the rate limit', async () => {
    const unpaced = await summarizeAtOnce(48, false);
    const paced = await summarizeAtOnce(48, true);
    expect(paced.fallbacks).toBe(0);
    expect(paced.refused).toBeLessThan(unpaced.refused);
    // 48 answers at 20 a second after the first 20 (the bucket's burst): 1.4 s, plus the last answer's latency.
    const boundMs = ((48 - PER_SECOND) / PER_SECOND) * 1000 + LATENCY_MS;
    expect(boundMs / paced.elapsedMs).toBeGreaterThanOrEqual(0.9);
  });
});

describe('createPacing', () => {
  const refused = (waitMs: number) => new MemfoldError('model_error', 'http 429', { retryable: true, details: { status: 429, retryAfterMs: waitMs } });

  it('holds every start for the wait, widens once for a herd refused together, spaces the rest, then narrows', async () => {
    let now = 0;
    const pacing = createPacing({
      clock: () => now,
      sleep: async (ms) => {
        now += ms;
      },
    });
    expect(await pacing.admit()).toBe(0);
    expect(pacing.intervalMs).toBe(0);
    // Three started at 0, all refused at 0 with 50 ms to wait: one pace learned, not three.
    for (let i = 0; i < 3; i++) pacing.settle(0, refused(50));
    expect(pacing.intervalMs).toBe(50);
    expect([await pacing.admit(), await pacing.admit(), await pacing.admit()]).toEqual([50, 100, 150]);
    // Refused at that pace: a quarter wider.
    pacing.settle(150, refused(10));
    expect(pacing.intervalMs).toBe(62.5);
    pacing.settle(160);
    expect(pacing.intervalMs).toBeCloseTo(62.5 * (63 / 64));
    // Other failures teach nothing.
    pacing.settle(170, new MemfoldError('model_error', 'http 500', { retryable: true, details: { status: 500 } }));
    expect(pacing.intervalMs).toBeCloseTo(62.5 * (63 / 64));
  });

  it('never paces slower than one start a second, whatever the wait asked', () => {
    const pacing = createPacing({ clock: () => 0, sleep: async () => {} });
    pacing.settle(0, refused(30_000));
    expect(pacing.intervalMs).toBe(MAX_LEARNED_INTERVAL_MS);
  });

  it('a queue with a set rate is never paced by it: the 429 is the retry loop’s alone', async () => {
    let now = 0;
    const sleeps: number[] = [];
    const queue = createModelQueue({ concurrency: 1, intervalCap: 1, interval: 1, pacing: { clock: () => now, sleep: async (ms) => void sleeps.push(ms) } });
    await queue.run(() => Promise.reject(refused(5_000))).catch(() => {});
    now = 10;
    await queue.run(async () => 'sent');
    expect(sleeps).toEqual([]);
  });
});
