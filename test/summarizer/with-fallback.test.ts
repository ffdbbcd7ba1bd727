import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemfoldError } from '../../src/errors.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import { withFallback } from '../../src/summarizer/with-fallback.js';
import type { Summarizer, SummarizeRequest } from '../../src/summarizer/summarizer.js';
import { createOpenAISummarizer, type OpenAISummarizerOptions } from '../../src/openai/openai-summarizer.js';
import { behaviors, startFakeOpenAI, type FakeBehavior, type FakeOpenAI } from '../support/fake-openai-server.js';

const request: SummarizeRequest = {
  purpose: 'fold',
  lines: [
    { role: 'user', name: 'Dana', text: 'Please book flight HAT069 from JFK to Seattle for $121 on May 20.', time: '2024-05-15T10:00:00.000Z' },
    { role: 'assistant', text: 'Booked reservation ZX81QK for Dana Ortiz, paid $121 with card 7447.', time: '2024-05-15T10:01:00.000Z' },
  ],
  maxOutputTokens: 200,
};

/** A port nothing listens on: bind one, remember it, close it. */
async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as { port: number };
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  return port;
}

/** One row per model fault: what the fake server does, the reason the answer reports, the requests it took. */
interface Fault {
  name: string;
  behavior: FakeBehavior;
  reason: string;
  /** Requests the server saw: maxRetries + 1 = 3 when retried, 1 when not. */
  requests: number;
  options?: Partial<OpenAISummarizerOptions>;
}

describe('withFallback', () => {
  let server: FakeOpenAI;
  let model: Summarizer;
  let sleeps: number[];
  const extractive = createExtractiveSummarizer();
  const remote = (options: Partial<OpenAISummarizerOptions> = {}) =>
    createOpenAISummarizer({
      baseURL: server.baseURL,
      model: 'fake',
      // Long enough that no answer times out however loaded the machine is; the timeout case sets its own.
      timeoutMs: 10_000,
      maxRetries: 2,
      deadlineMs: 30_000,
      retry: { sleep: async (ms) => void sleeps.push(ms) },
      ...options,
    });
  beforeAll(async () => {
    server = await startFakeOpenAI();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    server.setBehavior(behaviors.ok());
    sleeps = [];
    model = withFallback(remote(), extractive);
  });

  it('returns the primary answer when it succeeds', async () => {
    const answer = await model.summarize(request);
    expect(answer.text).toMatch(/^Summary:/);
    expect(answer.fallback).toBeUndefined();
    expect(model.id).toBe('openai:fake');
  });

  const faults: Fault[] = [
    { name: 'HTTP 500 on every attempt', behavior: behaviors.status(500), reason: 'http 500', requests: 3 },
    // A refusal that names its wait earns up to EXTRA_RATE_LIMIT_RETRIES more (openai-retry.ts): 3 + 4 requests.
    { name: 'HTTP 429 on every attempt', behavior: behaviors.status(429, { 'retry-after': '0' }), reason: 'http 429', requests: 7 },
    { name: 'HTTP 429 that names no wait', behavior: behaviors.status(429), reason: 'http 429', requests: 3 },
    { name: 'HTTP 400', behavior: behaviors.status(400), reason: 'http 400', requests: 1 },
    { name: 'a timeout', behavior: behaviors.delay(30_000), reason: 'timeout', requests: 3, options: { timeoutMs: 100 } },
    { name: 'empty text', behavior: behaviors.empty(), reason: 'empty output', requests: 1 },
    { name: 'a malformed body', behavior: behaviors.malformed(), reason: 'malformed response', requests: 3 },
    { name: 'truncated output', behavior: behaviors.truncated(), reason: 'truncated output', requests: 1 },
    { name: 'over-long output', behavior: behaviors.overLong(1_000), reason: 'over-long output', requests: 1 },
    { name: 'bytes that are not UTF-8', behavior: behaviors.invalidUtf8(), reason: 'invalid utf-8', requests: 3 },
    { name: 'a lone surrogate', behavior: behaviors.loneSurrogate(), reason: 'invalid utf-8', requests: 3 },
    {
      name: 'a retry-after past the deadline',
      behavior: behaviors.status(503, { 'retry-after': '30' }),
      reason: 'deadline exceeded (http 503)',
      requests: 1,
      options: { deadlineMs: 5_000 },
    },
    {
      name: 'an answer slower than the deadline',
      behavior: behaviors.delay(30_000),
      reason: 'deadline exceeded (timeout)',
      requests: 1,
      options: { timeoutMs: 5_000, deadlineMs: 150 },
    },
  ];
  for (const fault of faults) {
    it(`answers with the extractive summary after ${fault.name}: reason "${fault.reason}", ${fault.requests} request(s)`, async () => {
      server.setBehavior(fault.behavior);
      const started = Date.now();
      const answer = await withFallback(remote(fault.options), extractive).summarize(request);
      expect(answer.fallback).toEqual({ from: 'openai:fake', reason: fault.reason });
      // A request that timed out may not have reached the server on a loaded machine: never more than the attempts.
      if (fault.reason.includes('timeout')) expect(server.requests.length).toBeLessThanOrEqual(fault.requests);
      else expect(server.requests).toHaveLength(fault.requests);
      expect(sleeps).toHaveLength(fault.requests - 1);
      // Nothing waited for the server's 30 s (nor a 30 s retry-after).
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(answer.model).toBe('extractive');
      expect(answer.text).toContain('ZX81QK');
      expect(answer.text).toMatch(/^User asked:/);
      expect(answer.text).not.toMatch(/\uFFFD|\p{Cs}|word word/u);
    });
  }

  it('answers with the extractive summary after refused connections, retried maxRetries times', async () => {
    const answer = await withFallback(remote({ baseURL: `http://127.0.0.1:${await closedPort()}/v1` }), extractive).summarize(request);
    expect(answer.fallback).toEqual({ from: 'openai:fake', reason: 'connection error' });
    expect(sleeps).toHaveLength(2);
    expect(answer.text).toContain('ZX81QK');
  });

  it('throws only when the fallback throws too', async () => {
    server.setBehavior(behaviors.status(500));
    const broken: Summarizer = {
      id: 'broken',
      contextWindow: 1,
      summarize: async () => {
        throw new MemfoldError('model_error', 'fallback down');
      },
    };
    const both = withFallback(createOpenAISummarizer({ baseURL: server.baseURL, model: 'fake', timeoutMs: 1_000, maxRetries: 0 }), broken);
    await expect(both.summarize(request)).rejects.toThrow('fallback down');
  });
});
