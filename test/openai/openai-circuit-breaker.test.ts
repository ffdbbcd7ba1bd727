/**
 * The circuit breaker against a summary endpoint that accepts connections and never answers: after 3 timeouts in a
 * row the remote model is not called for the cooldown, the extractive fallback answers at once with the reason
 * `circuit open`; after the cooldown one trial call goes through.
 *
 * No test here depends on how fast the machine is. The unit part gives the real `openai` client a scripted `fetch`
 * (counted as it is called): a timeout is the abort the client reports as one, at once, and the breaker's clock is
 * injected, so the cooldown passes instantly. The createMemfold part runs against the fake server with real (short)
 * timeouts and checks only what they cause, never how long they took.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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
const COOLDOWN_MS = 60_000;

/** What the scripted endpoint does with one request. */
type Reply = { kind: 'timeout' } | { kind: 'status'; status: number } | { kind: 'ok'; text: string } | { kind: 'held'; text: string; release: Promise<void> };
const TIMEOUT: Reply = { kind: 'timeout' };
const ok = (text = 'Summary: flight HAT069 booked.'): Reply => ({ kind: 'ok', text });

function completion(text: string): Response {
  const body = {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: 0,
    model: 'fake',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 },
  };
  return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
}

/**
 * A chat endpoint as `fetch` sees it: each call takes the next queued reply, else the standing one. A timeout is an
 * `AbortError`, which the client reports as its own timeout (APIConnectionTimeoutError), without waiting for it.
 */
function scriptedEndpoint() {
  const queued: Reply[] = [];
  let standing: Reply = TIMEOUT;
  const endpoint = {
    calls: 0,
    set: (reply: Reply) => void (standing = reply),
    enqueue: (...replies: Reply[]) => void queued.push(...replies),
    fetch: (async () => {
      endpoint.calls++;
      const reply = queued.shift() ?? standing;
      switch (reply.kind) {
        case 'timeout':
          throw new DOMException('The operation was aborted.', 'AbortError');
        case 'status':
          return new Response(JSON.stringify({ error: { message: `status ${reply.status}` } }), {
            status: reply.status,
            headers: { 'content-type': 'application/json' },
          });
        case 'held':
          await reply.release;
          return completion(reply.text);
        case 'ok':
          return completion(reply.text);
      }
    }) as typeof fetch,
  };
  return endpoint;
}

describe('circuit breaker on the summarizer', () => {
  let now: number;
  let breaker: CircuitBreaker;
  let model: Summarizer;
  let endpoint: ReturnType<typeof scriptedEndpoint>;
  const sent = () => endpoint.calls;
  const reasons = async (calls: number) => {
    const out: Array<string | undefined> = [];
    for (let i = 0; i < calls; i++) out.push((await model.summarize(request)).fallback?.reason);
    return out;
  };

  beforeEach(() => {
    endpoint = scriptedEndpoint();
    now = 1_000_000;
    breaker = createCircuitBreaker({ failures: 3, cooldownMs: COOLDOWN_MS, clock: () => now });
    // The client's own timeout never fires: the scripted endpoint times out by itself, at once.
    const remote = createOpenAISummarizer({
      baseURL: 'http://scripted.invalid/v1',
      model: 'fake',
      timeoutMs: 600_000,
      maxRetries: 0,
      breaker,
      fetch: endpoint.fetch,
      retry: { sleep: async () => {}, clock: () => now },
    });
    model = withFallback(remote, createExtractiveSummarizer());
  });

  it('opens after 3 timeouts in a row: later calls are not sent and the fallback answers, saying why', async () => {
    expect(await reasons(3)).toEqual(['timeout', 'timeout', 'timeout']);
    expect(sent()).toBe(3);
    expect(breaker.state).toBe('open');
    const answers = await Promise.all(Array.from({ length: 6 }, () => model.summarize(request)));
    expect(answers.map((a) => a.fallback)).toEqual(Array(6).fill({ from: 'openai:fake', reason: 'circuit open' }));
    expect(answers[0]!.text).toContain('HAT069'); // the extractive summary
    expect(sent()).toBe(3); // refused without calling: nothing to wait for
  });

  it('after the cooldown one trial call goes through; its answer closes the circuit', async () => {
    await reasons(3);
    now += COOLDOWN_MS - 1;
    expect(await reasons(1)).toEqual(['circuit open']);
    now += 1;
    expect(breaker.state).toBe('half-open');
    endpoint.set(ok());
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
    let release!: () => void;
    // The trial's answer is held until the other call has been refused.
    endpoint.set({ kind: 'held', text: 'Summary: trial answered.', release: new Promise<void>((resolve) => (release = resolve)) });
    const trial = model.summarize(request);
    const other = await model.summarize(request);
    release();
    expect((await trial).fallback).toBeUndefined();
    expect(other.fallback?.reason).toBe('circuit open');
    expect(sent()).toBe(4);
  });

  it('only outages count: answers in between reset the count, and HTTP errors never open it', async () => {
    endpoint.enqueue(TIMEOUT, TIMEOUT, ok(), TIMEOUT, TIMEOUT, { kind: 'status', status: 500 }, TIMEOUT, TIMEOUT);
    expect(await reasons(8)).toEqual(['timeout', 'timeout', undefined, 'timeout', 'timeout', 'http 500', 'timeout', 'timeout']);
    expect(breaker.state).toBe('closed');
    endpoint.set({ kind: 'status', status: 503 });
    expect(await reasons(5)).toEqual(Array(5).fill('http 503'));
    expect(sent()).toBe(13);
  });

  it('refuses settings that make no sense, naming them', () => {
    expect(() => createCircuitBreaker({ failures: -1 })).toThrow(InvalidArgumentError);
    expect(() => createCircuitBreaker({ cooldownMs: 0 })).toThrow(/cooldownMs/);
  });
});

describe('circuit breaker through createMemfold', () => {
  let server: FakeOpenAI;
  beforeAll(async () => {
    server = await startFakeOpenAI();
  });
  afterAll(async () => {
    await server.close();
  });

  it('a hanging endpoint costs three timeouts, not one per summary: the rest of the compaction falls back at once', async () => {
    server.requests.length = 0;
    server.setBehavior(behaviors.delay(30_000));
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
      // Three calls timed out; every later one was refused without being sent. (On a busy machine a request can
      // time out before the server has read it, so the server may count fewer: never more.)
      const why = result.fallbacks.map((f) => f.reason);
      expect(why).toEqual(['timeout', 'timeout', 'timeout', ...Array(why.length - 3).fill('circuit open')]);
      expect(result.fallbacks).toHaveLength(result.modelCalls);
      expect(server.requests.filter((r) => r.path === '/v1/chat/completions').length).toBeLessThanOrEqual(3);
    } finally {
      await memfold.close();
      await store.cleanup();
      await rm(lancedbUri, { recursive: true, force: true });
    }
  });
});
