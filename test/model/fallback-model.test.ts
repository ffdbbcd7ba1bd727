import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildFoldRequest } from '../../src/compaction/prompt.js';
import { renderTranscript } from '../../src/compaction/transcript-format.js';
import { MemfoldError } from '../../src/errors.js';
import { createExtractiveSummarizer } from '../../src/model/extractive/extractive-summarizer.js';
import { withFallback } from '../../src/model/fallback-model.js';
import type { CompletionRequest, ModelProvider } from '../../src/model/model-provider.js';
import { createOpenAIModel } from '../../src/model/openai/openai-model.js';
import { behaviors, startFakeOpenAI, type FakeBehavior, type FakeOpenAI } from '../support/fake-openai-server.js';

const transcript = renderTranscript([
  { role: 'user', name: 'Dana', content: 'Please book flight HAT069 from JFK to Seattle for $121 on May 20.', createdAt: '2024-05-15T10:00:00.000Z' },
  { role: 'assistant', content: 'Booked reservation ZX81QK for Dana Ortiz, paid $121 with card 7447.', createdAt: '2024-05-15T10:01:00.000Z' },
]);
const request: CompletionRequest = { system: 'Summarize.', messages: [{ role: 'user', content: buildFoldRequest(transcript, undefined) }], maxOutputTokens: 200 };

describe('withFallback', () => {
  let server: FakeOpenAI;
  let model: ModelProvider;
  const extractive = createExtractiveSummarizer();
  beforeAll(async () => {
    server = await startFakeOpenAI();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    server.setBehavior(behaviors.ok());
    model = withFallback(
      createOpenAIModel({ baseURL: server.baseURL, model: 'fake', timeoutMs: 150, maxRetries: 1, retry: { sleep: async () => {} } }),
      extractive,
    );
  });

  it('returns the primary answer when it succeeds', async () => {
    const answer = await model.complete(request);
    expect(answer.text).toMatch(/^Summary:/);
    expect(answer.fallback).toBeUndefined();
    expect(model.id).toBe('openai:fake');
  });

  const failures: Array<[string, FakeBehavior, string]> = [
    ['HTTP 500', behaviors.status(500), 'http 500'],
    ['HTTP 429', behaviors.status(429, { 'retry-after': '0' }), 'http 429'],
    ['HTTP 400', behaviors.status(400), 'http 400'],
    ['a timeout', behaviors.delay(1_000), 'timeout'],
    ['empty text', behaviors.empty(), 'empty output'],
    ['a malformed body', behaviors.malformed(), 'malformed response'],
  ];
  it.each(failures)('answers with the extractive summary after %s', async (_name, behavior, reason) => {
    server.setBehavior(behavior);
    const answer = await model.complete(request);
    expect(answer.fallback).toEqual({ from: 'openai:fake', reason });
    expect(answer.model).toBe('extractive');
    expect(answer.text).toContain('ZX81QK');
    expect(answer.text).toMatch(/^User asked:/);
  });

  it('throws only when the fallback throws too', async () => {
    server.setBehavior(behaviors.status(500));
    const broken: ModelProvider = {
      id: 'broken',
      contextWindow: 1,
      complete: async () => {
        throw new MemfoldError('model_error', 'fallback down');
      },
    };
    const both = withFallback(createOpenAIModel({ baseURL: server.baseURL, model: 'fake', timeoutMs: 1_000, maxRetries: 0 }), broken);
    await expect(both.complete(request)).rejects.toThrow('fallback down');
  });
});
