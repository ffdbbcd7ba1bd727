/**
 * Which model writes the summaries: MEMFOLD_SUMMARY_MODEL, else a cheap model of a known provider, else MEMFOLD_MODEL,
 * else offline; and MEMFOLD_SUMMARY_CONTEXT_WINDOW bounding every request. Requests checked at a fake server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../src/errors.js';
import { createMemfold } from '../../src/memfold.js';
import { chooseSummaryModel } from '../../src/openai/summary-model.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { orderChat } from '../support/messages.js';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.setBehavior(behaviors.ok('Orders ORD-500 to ORD-519 were checked.'));
});
afterAll(() => fake.close());

describe('summary model choice', () => {
  it('follows MEMFOLD_SUMMARY_MODEL, then the provider default, then MEMFOLD_MODEL, and stays offline without an endpoint', () => {
    expect(chooseSummaryModel({ summaryModel: 'm', assistantModel: 'a' })).toEqual({ model: 'm', source: 'summary_model' });
    expect(chooseSummaryModel({ openaiApiKey: 'k', assistantModel: 'gpt-4o' })).toEqual({
      model: 'gpt-4.1-mini',
      source: 'provider_default',
      provider: 'OpenAI',
    });
    expect(chooseSummaryModel({ openaiBaseUrl: 'https://openrouter.ai/api/v1' })).toMatchObject({ model: 'openai/gpt-4.1-mini', source: 'provider_default' });
    expect(chooseSummaryModel({ openaiBaseUrl: 'https://api.anthropic.com/v1/', assistantModel: 'claude-sonnet-4-5' })).toEqual({
      model: 'claude-haiku-4-5',
      source: 'provider_default',
      provider: 'Anthropic',
    });
    expect(chooseSummaryModel({ openaiBaseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai/', assistantModel: 'gemini-2.5-pro' })).toEqual({
      model: 'gemini-2.5-flash-lite',
      source: 'provider_default',
      provider: 'Google',
    });
    expect(chooseSummaryModel({ openaiBaseUrl: 'http://127.0.0.1:11434/v1', assistantModel: 'llama3.1' })).toEqual({
      model: 'llama3.1',
      source: 'assistant_model',
    });
    expect(chooseSummaryModel({ openaiBaseUrl: 'http://127.0.0.1:11434/v1' })).toEqual({ source: 'offline' });
    // No endpoint: nothing leaves the machine, whatever the assistant's model.
    expect(chooseSummaryModel({ assistantModel: 'gpt-4o' })).toEqual({ source: 'offline' });
  });

  it("summarizes with the assistant's model at a local endpoint, and every result names who answered", async () => {
    const memfold = await createMemfold({
      store: 'memory',
      env: { OPENAI_BASE_URL: fake.baseURL, MEMFOLD_MODEL: 'gpt-4o', MEMFOLD_MODEL_MAX_RETRIES: '0' },
      compaction: { contextWindow: 2_000 },
    });
    expect(memfold.summaryModel).toEqual({ model: 'gpt-4o', source: 'assistant_model' });
    await memfold.append('c', orderChat(20));
    const from = fake.requests.length;
    const result = await memfold.compact('c', { force: true });
    expect(result.models).toEqual(['gpt-4o']);
    expect(fake.requests.slice(from).every((r) => r.body.model === 'gpt-4o')).toBe(true);
    await memfold.close();

    const offline = await createMemfold({ store: 'memory', env: { MEMFOLD_MODEL: 'gpt-4o' }, compaction: { contextWindow: 2_000 } });
    expect(offline.summaryModel).toEqual({ source: 'offline' });
    await offline.append('c', orderChat(20));
    expect((await offline.compact('c', { force: true })).models).toEqual(['extractive']);
    await offline.close();
  });

  it('MEMFOLD_SUMMARY_CONTEXT_WINDOW keeps every request within 80% of a small window', async () => {
    const window = 4_096;
    const memfold = await createMemfold({
      store: 'memory',
      env: {
        OPENAI_BASE_URL: fake.baseURL,
        MEMFOLD_SUMMARY_MODEL: 'small-local',
        MEMFOLD_SUMMARY_CONTEXT_WINDOW: String(window),
        MEMFOLD_MODEL_MAX_RETRIES: '0',
      },
      compaction: { contextWindow: 16_000, maxSummaryTokens: 512 },
    });
    expect(memfold.summarizer.contextWindow).toBe(window);
    await memfold.append('c', orderChat(200));
    const from = fake.requests.length;
    const result = await memfold.compact('c', { force: true });
    expect(result.status).toBe('compacted');
    const requests = fake.requests.slice(from);
    expect(requests.length).toBeGreaterThan(1);
    for (const request of requests) {
      const text = request.body.messages.map((m: { content: string }) => m.content).join('\n');
      // chars / 4 overestimates these tokens; the answer's room (max_tokens) counts too.
      expect(Math.ceil(text.length / 4) + request.body.max_tokens).toBeLessThanOrEqual(window * 0.8);
    }
    await memfold.close();
  });

  it('refuses a window under 1,024 naming the variable, and one too small for the summaries naming the way out', async () => {
    await expect(createMemfold({ store: 'memory', env: { MEMFOLD_SUMMARY_CONTEXT_WINDOW: '512' } })).rejects.toThrow(
      /MEMFOLD_SUMMARY_CONTEXT_WINDOW: must be an integer >= 1024/,
    );
    await expect(
      createMemfold({ store: 'memory', env: { OPENAI_BASE_URL: fake.baseURL, MEMFOLD_SUMMARY_MODEL: 's', MEMFOLD_SUMMARY_CONTEXT_WINDOW: '2048' } }),
    ).rejects.toThrow(/leaves no room for a chunk beside the instructions and twice maxSummaryTokens \(1024\)/);
    await expect(createMemfold({ store: 'memory', env: {}, config: { summaryContextWindow: 10 } })).rejects.toThrow(InvalidConfigError);
  });
});
