import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemfoldError } from '../../src/errors.js';
import { createModelQueue } from '../../src/openai/openai-queue.js';
import { createOpenAISummarizer, type OpenAISummarizerOptions } from '../../src/openai/openai-summarizer.js';
import type { SummarizeRequest } from '../../src/summarizer/summarizer.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';

const request = (text = 'hello world'): SummarizeRequest => ({
  purpose: 'fold',
  lines: [{ time: '2024-05-15T10:00:00.000Z', role: 'user', text }],
  maxOutputTokens: 64,
});

/** A port nothing listens on: bind one, remember it, close it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('createOpenAISummarizer against the fake server', () => {
  let server: FakeOpenAI;
  let sleeps: number[];
  const model = (extra: Partial<OpenAISummarizerOptions> = {}) =>
    createOpenAISummarizer({
      baseURL: server.baseURL,
      model: 'fake-model',
      timeoutMs: 2_000,
      maxRetries: 2,
      // Room for every retry these tests count; the deadline tests set their own.
      deadlineMs: 60_000,
      retry: { sleep: async (ms) => void sleeps.push(ms), random: () => 0.5 },
      ...extra,
    });
  const failure = async (m: ReturnType<typeof model>, req = request()) => (await m.summarize(req).catch((e: unknown) => e)) as MemfoldError;

  beforeEach(async () => {
    server = await startFakeOpenAI();
    sleeps = [];
  });
  afterEach(async () => {
    await server.close();
  });

  it('returns text, usage and model; sends system + messages and max_tokens, with a placeholder key', async () => {
    const answer = await model().summarize(request('the cat sat on the mat'));
    expect(answer.text).toContain('Summary: [2024-05-15T10:00:00.000Z] user: the cat sat');
    expect(answer.usage).toEqual({ inputTokens: 111, outputTokens: 22 });
    expect(answer.model).toBe('fake-model');
    expect(server.requests).toHaveLength(1);
    const sent = server.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(sent.body.max_tokens).toBe(64);
    expect(sent.headers['authorization']).toBe('Bearer not-needed');
  });

  it('has id openai:<model> and the default context window', () => {
    const m = model();
    expect(m.id).toBe('openai:fake-model');
    expect(m.contextWindow).toBe(128_000);
    expect(model({ contextWindow: 32_000 }).contextWindow).toBe(32_000);
  });

  it('can send max_completion_tokens instead', async () => {
    await model({ maxTokensField: 'max_completion_tokens' }).summarize(request());
    expect(server.requests[0]!.body.max_completion_tokens).toBe(64);
    expect(server.requests[0]!.body.max_tokens).toBeUndefined();
  });

  it('estimates usage when the server reports none', async () => {
    server.setBehavior(behaviors.okWithoutUsage('twelve chars'));
    const answer = await model().summarize(request());
    expect(answer.usage.outputTokens).toBe(3);
    expect(answer.usage.inputTokens).toBeGreaterThan(0);
  });

  it('retries HTTP 500 and fails after maxRetries + 1 attempts, keeping each', async () => {
    server.setBehavior(behaviors.status(500));
    const error = (await model()
      .summarize(request())
      .catch((e: unknown) => e)) as MemfoldError;
    expect(MemfoldError.isInstance(error)).toBe(true);
    expect(error.code).toBe('model_error');
    expect(server.requests).toHaveLength(3);
    expect(error.details['reason']).toBe('http 500');
    expect(error.details['status']).toBe(500);
    expect((error.details['attempts'] as unknown[]).length).toBe(3);
    expect(sleeps).toHaveLength(2);
  });

  it('recovers when a retry succeeds', async () => {
    server.enqueue(behaviors.status(503), behaviors.status(502));
    const answer = await model().summarize(request());
    expect(answer.text).toMatch(/^Summary:/);
    expect(server.requests).toHaveLength(3);
  });

  it('honours retry-after on 429', async () => {
    server.enqueue(behaviors.status(429, { 'retry-after': '7' }));
    const answer = await model().summarize(request());
    expect(answer.text).toMatch(/^Summary:/);
    expect(sleeps).toEqual([7_000]);
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry 400 (nor 401, 404)', async () => {
    for (const code of [400, 401, 404]) {
      server.requests.length = 0;
      server.setBehavior(behaviors.status(code));
      const error = (await model()
        .summarize(request())
        .catch((e: unknown) => e)) as MemfoldError;
      expect(error.details['reason']).toBe(`http ${code}`);
      expect(server.requests).toHaveLength(1);
    }
    expect(sleeps).toEqual([]);
  });

  it('times out (retryable) with a short timeoutMs', async () => {
    // The server would answer after 30 s: only the timeout can end the call.
    server.setBehavior(behaviors.delay(30_000));
    const started = Date.now();
    const error = (await model({ timeoutMs: 100, maxRetries: 1 })
      .summarize(request())
      .catch((e: unknown) => e)) as MemfoldError;
    expect(error.details['reason']).toBe('timeout');
    expect(error.details['attempts']).toHaveLength(2);
    // On a loaded machine an attempt can time out before the server has read it: never more than two.
    expect(server.requests.length).toBeLessThanOrEqual(2);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('rejects empty text without retrying', async () => {
    server.setBehavior(behaviors.empty());
    const error = (await model()
      .summarize(request())
      .catch((e: unknown) => e)) as MemfoldError;
    expect(error.details['reason']).toBe('empty output');
    expect(server.requests).toHaveLength(1);
  });

  it('treats whitespace-only text as empty', async () => {
    server.setBehavior(behaviors.ok('  \n '));
    const error = (await model()
      .summarize(request())
      .catch((e: unknown) => e)) as MemfoldError;
    expect(error.details['reason']).toBe('empty output');
  });

  it('retries a malformed (non-JSON) body', async () => {
    server.setBehavior(behaviors.malformed());
    const error = (await model({ maxRetries: 1 })
      .summarize(request())
      .catch((e: unknown) => e)) as MemfoldError;
    expect(error.details['reason']).toBe('malformed response');
    expect(server.requests).toHaveLength(2);
  });

  it('retries a refused connection', async () => {
    const port = await closedPort();
    const error = (await createOpenAISummarizer({
      baseURL: `http://127.0.0.1:${port}/v1`,
      model: 'm',
      timeoutMs: 1_000,
      maxRetries: 2,
      retry: { sleep: async (ms) => void sleeps.push(ms) },
    })
      .summarize(request())
      .catch((e: unknown) => e)) as MemfoldError;
    expect(error.details['reason']).toBe('connection error');
    expect((error.details['attempts'] as unknown[]).length).toBe(3);
  });

  it('rejects truncated output (finish_reason "length") without retrying', async () => {
    server.setBehavior(behaviors.truncated());
    const error = await failure(model());
    expect(error.details['reason']).toBe('truncated output');
    expect(error.details['stoppedBy']).toBe('not retryable');
    expect(error.message).toMatch(/cut off at the 64-token limit/);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects over-long output (over 2 x maxOutputTokens by the server count or by chars/4) without retrying', async () => {
    server.setBehavior(behaviors.overLong(129)); // maxOutputTokens 64: the limit is 128
    expect((await failure(model())).details['reason']).toBe('over-long output');
    expect(server.requests).toHaveLength(1);
    // Without usage the estimate decides: 129 x 4 characters.
    server.setBehavior(behaviors.okWithoutUsage('x'.repeat(129 * 4)));
    expect((await failure(model())).details['reason']).toBe('over-long output');
    // Up to twice the limit passes: tokenizers differ, and the compactor's own budget absorbs it.
    server.setBehavior(behaviors.overLong(128));
    expect((await model().summarize(request())).usage.outputTokens).toBe(128);
    expect(server.requests).toHaveLength(3);
  });

  it('retries invalid UTF-8 (raw bytes, a lone surrogate) and keeps the clean answer', async () => {
    server.enqueue(behaviors.invalidUtf8(), behaviors.loneSurrogate());
    const answer = await model().summarize(request());
    expect(answer.text).toMatch(/^Summary:/);
    expect(answer.text).not.toMatch(/\uFFFD|\p{Cs}/u);
    expect(server.requests).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it('gives up on invalid UTF-8 after maxRetries + 1 attempts', async () => {
    server.setBehavior(behaviors.invalidUtf8());
    const error = await failure(model());
    expect(error.details['reason']).toBe('invalid utf-8');
    expect(error.details['stoppedBy']).toBe('retries exhausted');
    expect(server.requests).toHaveLength(3);
  });

  it('accepts a replacement character that the request itself holds', async () => {
    server.setBehavior(behaviors.ok('Summary: the file name was caf\uFFFD.txt'));
    const answer = await model().summarize(request('the file name was caf\uFFFD.txt'));
    expect(answer.text).toContain('caf\uFFFD.txt');
  });

  it('cuts a slow attempt short at the deadline and does not retry past it', async () => {
    server.setBehavior(behaviors.delay(30_000));
    const started = Date.now();
    const error = await failure(model({ timeoutMs: 20_000, deadlineMs: 200 }));
    // Far below the timeout and the server's delay: the deadline ended it.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(error.details['reason']).toBe('deadline exceeded (timeout)');
    expect(error.details['stoppedBy']).toBe('deadline');
    expect(error.details['attempts']).toHaveLength(1);
    expect(server.requests.length).toBeLessThanOrEqual(1);
    expect(sleeps).toEqual([]);
  });

  it('defaults the deadline to twice timeoutMs: a retry-after beyond it ends the call at once', async () => {
    server.setBehavior(behaviors.status(429, { 'retry-after': '7' }));
    const error = await failure(
      createOpenAISummarizer({ baseURL: server.baseURL, model: 'm', timeoutMs: 2_000, maxRetries: 2, retry: { sleep: async (ms) => void sleeps.push(ms) } }),
    );
    expect(error.details['reason']).toBe('deadline exceeded (http 429)');
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('sends nothing when the deadline passes while the call waits in the queue', async () => {
    server.setBehavior(behaviors.delay(400));
    const queue = createModelQueue({ concurrency: 1 });
    const slow = model({ queue }).summarize(request('first'));
    const error = await failure(model({ queue, deadlineMs: 100 }), request('second'));
    await slow;
    expect(error.details['reason']).toBe('deadline exceeded');
    expect(error.details['stoppedBy']).toBe('deadline');
    expect(server.requests).toHaveLength(1);
  });

  it('honours an abort signal', async () => {
    server.setBehavior(behaviors.delay(5_000));
    const controller = new AbortController();
    const pending = model().summarize({ ...request(), signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const error = (await pending.catch((e: unknown) => e)) as MemfoldError;
    expect(error.details['reason']).toBe('aborted');
    // Aborted once, not retried (the request may not have reached the server yet on a loaded machine).
    expect(server.requests.length).toBeLessThanOrEqual(1);
  });

  it('limits concurrency through the shared queue', async () => {
    server.setBehavior(behaviors.delay(80));
    const queue = createModelQueue({ concurrency: 2 });
    const m = model({ queue });
    await Promise.all(Array.from({ length: 6 }, (_, i) => m.summarize(request(`call ${i}`))));
    expect(server.requests).toHaveLength(6);
    expect(server.maxInFlight).toBe(2);
  });

  it('validates its options', () => {
    expect(() => createOpenAISummarizer({ model: '', timeoutMs: 1, maxRetries: 0 })).toThrow(/Invalid argument model/);
    expect(() => createOpenAISummarizer({ model: 'm', timeoutMs: 0, maxRetries: 0 })).toThrow(/timeoutMs/);
    expect(() => createOpenAISummarizer({ model: 'm', timeoutMs: 1, maxRetries: 0, deadlineMs: 0 })).toThrow(/deadlineMs/);
    expect(() => createModelQueue({ concurrency: 0 })).toThrow(/concurrency/);
    expect(() => createModelQueue({ concurrency: 1, intervalCap: 2 })).toThrow(/interval/);
  });
});
