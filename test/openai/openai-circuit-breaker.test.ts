/**
 * The circuit breaker against a summary endpoint that accepts connections and never answers (the fake server
 * hanging): after 3 timeouts in a row the remote model is not called for the cooldown, the extractive fallback
 * answers at once with the reason `circuit open`; after the cooldown one trial call goes through. The breaker's
 * clock is injected, so the cooldown passes instantly; the timeouts are real but short.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/conversation/types.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { createMemfold } from '../../src/memfold.js';
import { createCircuitBreaker, type CircuitBreaker } from '../../src/openai/openai-circuit-breaker.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import { withFallback } from '../../src/summarizer/with-fallback.js';
import type { Summarizer, SummarizeRequest } from '../../src/summarizer/summarizer.js';
import { createOpenAISummarizer } from '../../src/openai/openai-summarizer.js';
import { persistenceBackends } from '../support/backends.js';
import { orderChat } from '../support/messages.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';

const request: SummarizeRequest = {
  purpose: 'fold',
  lines: [{ time: '2024-05-15T10:00:00.000Z', role: 'user', text: 'please book flight HAT069 to Seattle for $121' }],
  maxOutputTokens: 200,
};
const HANG = behaviors.delay(30_000);
const COOLDOWN_MS = 60_000;

let server: FakeOpenAI;
beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server.close();
});

describe('circuit breaker on the summarizer', () => {
  let now: number;
  let breaker: CircuitBreaker;
  let model: Summarizer;
  const sent = () => server.requests.filter((r) => r.path === '/v1/chat/completions').length;
  const reasons = async (calls: number) => {
    const out: Array<string | undefined> = [];
    for (let i = 0; i < calls; i++) out.push((await model.summarize(request)).fallback?.reason);
    return out;
  };

  beforeEach(() => {
    server.requests.length = 0;
    server.setBehavior(HANG);
    now = 1_000_000;
    breaker = createCircuitBreaker({ failures: 3, cooldownMs: COOLDOWN_MS, clock: () => now });
    const remote = createOpenAISummarizer({ baseURL: server.baseURL, model: 'fake', timeoutMs: 60, maxRetries: 0, breaker, retry: { sleep: async () => {} } });
    model = withFallback(remote, createExtractiveSummarizer());
  });

  it('opens after 3 timeouts in a row: later calls are not sent and the fallback answers at once, saying why', async () => {
    expect(await reasons(3)).toEqual(['timeout', 'timeout', 'timeout']);
    expect(sent()).toBe(3);
    expect(breaker.state).toBe('open');
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 6 }, () => model.summarize(request)));
    expect(performance.now() - started).toBeLessThan(60); // less than one timeout for all six
    expect(answers.map((a) => a.fallback)).toEqual(Array(6).fill({ from: 'openai:fake', reason: 'circuit open' }));
    expect(answers[0]!.text).toContain('HAT069'); // the extractive summary
    expect(sent()).toBe(3);
  });

  it('after the cooldown one trial call goes through; its answer closes the circuit', async () => {
    await reasons(3);
    now += COOLDOWN_MS - 1;
    expect(await reasons(1)).toEqual(['circuit open']);
    now += 1;
    expect(breaker.state).toBe('half-open');
    server.setBehavior(behaviors.ok('Summary: flight HAT069 booked.'));
    const trial = await model.summarize(request);
    expect(trial.fallback).toBeUndefined();
    expect(trial.text).toBe('Summary: flight HAT069 booked.');
    expect(breaker.state).toBe('closed');
    expect(await reasons(2)).toEqual([undefined, undefined]);
    expect(sent()).toBe(6);
  });

  it('a trial that times out opens the circuit again for another cooldown', async () => {
    await reasons(3);
    now += COOLDOWN_MS;
    expect(await reasons(2)).toEqual(['timeout', 'circuit open']);
    expect(sent()).toBe(4);
    now += COOLDOWN_MS;
    expect(breaker.state).toBe('half-open');
  });

  it('while the trial is under way, other calls are refused', async () => {
    await reasons(3);
    now += COOLDOWN_MS;
    server.setBehavior(behaviors.delay(30, behaviors.ok('Summary: trial answered.')));
    const [trial, other] = await Promise.all([model.summarize(request), model.summarize(request)]);
    expect(trial.fallback).toBeUndefined();
    expect(other.fallback?.reason).toBe('circuit open');
    expect(sent()).toBe(4);
  });

  it('only outages count: answers in between reset the count, and HTTP errors never open it', async () => {
    server.enqueue(HANG, HANG, behaviors.ok(), HANG, HANG, behaviors.status(500), HANG, HANG);
    expect(await reasons(8)).toEqual(['timeout', 'timeout', undefined, 'timeout', 'timeout', 'http 500', 'timeout', 'timeout']);
    expect(breaker.state).toBe('closed');
    server.setBehavior(behaviors.status(503));
    expect(await reasons(5)).toEqual(Array(5).fill('http 503'));
    expect(sent()).toBe(13);
  });

  it('refuses settings that make no sense, naming them', () => {
    expect(() => createCircuitBreaker({ failures: -1 })).toThrow(InvalidArgumentError);
    expect(() => createCircuitBreaker({ cooldownMs: 0 })).toThrow(/cooldownMs/);
  });
});

describe('circuit breaker through createMemfold', () => {
  it('a hanging endpoint costs three timeouts, not one per summary: the rest of the compaction falls back at once', async () => {
    server.requests.length = 0;
    server.setBehavior(HANG);
    const [backend] = persistenceBackends();
    const store = await backend!.open();
    const lancedbUri = await mkdtemp(path.join(os.tmpdir(), 'memfold-breaker-'));
    const memfold = await createMemfold({
      persistence: store.persistence,
      config: { lancedbUri },
      compaction: { contextWindow: 2_000 },
      env: { OPENAI_BASE_URL: server.baseURL, MEMFOLD_SUMMARY_MODEL: 'fake-summarizer', MEMFOLD_MODEL_TIMEOUT_MS: '150', MEMFOLD_MODEL_MAX_RETRIES: '0' },
    });
    try {
      await memfold.append('orders', orderChat(80));
      const result = await memfold.compact('orders');
      expect(result.status, result.error).toBe('compacted');
      expect(result.modelCalls).toBeGreaterThanOrEqual(6);
      expect(server.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(3);
      const why = result.fallbacks.map((f) => f.reason);
      expect(why).toEqual(['timeout', 'timeout', 'timeout', ...Array(why.length - 3).fill('circuit open')]);
      expect(result.fallbacks).toHaveLength(result.modelCalls);
      // Three timeouts of 150 ms, then no waiting (generous bound for a loaded machine).
      expect(result.stageMs.fold!).toBeLessThan(3 * 150 + 1_500);
    } finally {
      await memfold.close();
      await store.cleanup();
      await rm(lancedbUri, { recursive: true, force: true });
    }
  });
});
