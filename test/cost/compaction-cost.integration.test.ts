/**
 * Each compaction's cost: the usage the summarizer reported, per model, priced with memfold's table. Through the real
 * OpenAI adapter against the fake server, the offline summarizer, and `inspect --json`'s per-conversation figures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectConversation } from '../../src/cli/commands/inspect.js';
import type { CompactionEvent } from '../../src/compaction/compaction-result.js';
import { DEFAULT_PRICES } from '../../src/cost/default-prices.js';
import { InvalidConfigError } from '../../src/errors.js';
import { createMemfold, type MemfoldEvent, type MemfoldOptions } from '../../src/memfold.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { orderChat } from '../support/messages.js';

const USAGE = { prompt_tokens: 1_000, completion_tokens: 200 };
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.setBehavior({ kind: 'ok', text: 'Orders ORD-500 to ORD-519 were checked.', usage: USAGE });
});
afterAll(() => fake.close());

async function compactOnce(options: MemfoldOptions) {
  const events: MemfoldEvent[] = [];
  const memfold = await createMemfold({ store: 'memory', compaction: { contextWindow: 2_000 }, onEvent: (e) => events.push(e), ...options });
  await memfold.append('c', orderChat(20));
  const from = fake.requests.length;
  const result = await memfold.compact('c', { force: true });
  const requests = fake.requests.slice(from).filter((r) => r.path === '/v1/chat/completions').length;
  const ended = events.find((e): e is Extract<CompactionEvent, { type: 'compaction_ended' }> => e.type === 'compaction_ended');
  return { memfold, result, requests, ended };
}

const remote = (model: string) => ({ OPENAI_BASE_URL: fake.baseURL, MEMFOLD_SUMMARY_MODEL: model, MEMFOLD_MODEL_MAX_RETRIES: '0' });

describe('compaction cost', () => {
  it("prices the fake server's reported usage as gpt-4.1-mini, and compaction_ended carries it", async () => {
    const { memfold, result, requests, ended } = await compactOnce({ env: remote('gpt-4.1-mini') });
    expect(result.status).toBe('compacted');
    expect(requests).toBeGreaterThan(0);
    expect(result.usageByModel).toEqual({ 'gpt-4.1-mini': { calls: requests, inputTokens: 1_000 * requests, outputTokens: 200 * requests } });
    // $0.40 per million input tokens, $1.60 per million output tokens: 1,000 x 0.40 + 200 x 1.60 = 720 micro-dollars a call.
    expect(result.costUsd).toBeCloseTo(requests * 0.00072, 12);
    expect(ended).toMatchObject({ status: 'compacted', costUsd: result.costUsd, usageByModel: result.usageByModel });
    await memfold.close();
  });

  it("uses the application's prices, checked before anything opens", async () => {
    const { memfold, result, requests } = await compactOnce({ env: remote('gpt-4.1-mini'), prices: { 'gpt-4.1-mini': { input: 1, output: 2 } } });
    expect(memfold.prices['gpt-4.1-mini']).toEqual({ input: 1, output: 2, cachedInput: 0.1 });
    expect(result.costUsd).toBeCloseTo(requests * 0.0014, 12);
    await memfold.close();
    await expect(createMemfold({ store: 'memory', prices: { 'gpt-4.1-mini': { output: -1 } } })).rejects.toThrow(InvalidConfigError);
    await expect(createMemfold({ store: 'memory', prices: { 'gpt-4.1-mini': { output: -1 } } })).rejects.toMatchObject({
      field: 'prices.gpt-4.1-mini.output',
    });
  });

  it('is null when a model that answered has no price, with the usage still recorded', async () => {
    const { memfold, result, requests, ended } = await compactOnce({ env: remote('my-local-model') });
    expect(result.status).toBe('compacted');
    expect(result.costUsd).toBeNull();
    expect(result.usageByModel['my-local-model']?.calls).toBe(requests);
    expect(ended?.costUsd).toBeNull();
    await memfold.close();
  });

  it('costs 0 with the offline summarizer, and 0 when nothing ran', async () => {
    const { memfold, result, ended } = await compactOnce({ env: {} });
    expect(result.models).toEqual(['extractive']);
    expect(result.usageByModel['extractive']?.calls).toBe(result.modelCalls);
    expect(result.costUsd).toBe(0);
    expect(ended?.costUsd).toBe(0);
    const skipped = await memfold.compact('c');
    expect(skipped.status).toBe('skipped');
    expect(skipped).toMatchObject({ costUsd: 0, usageByModel: {} });
    await memfold.close();
  });
});

describe('inspect --json: the conversation', () => {
  it('sums what each committed compaction recorded, beside the configured model and its price', async () => {
    const { memfold, result } = await compactOnce({ env: remote('gpt-4.1-mini') });
    await memfold.append('c', orderChat(20, 100));
    const second = await memfold.compact('c', { force: true });
    expect(second.status).toBe('compacted');
    const { summarizerCost } = await inspectConversation(memfold, 'c');
    expect(summarizerCost).toMatchObject({ recorded: 2, unrecorded: 0, model: 'gpt-4.1-mini', price: DEFAULT_PRICES['gpt-4.1-mini'] });
    const used = [result, second].map((r) => r.usageByModel['gpt-4.1-mini']!);
    expect(summarizerCost.byModel['gpt-4.1-mini']).toEqual({
      calls: used[0]!.calls + used[1]!.calls,
      inputTokens: used[0]!.inputTokens + used[1]!.inputTokens,
      outputTokens: used[0]!.outputTokens + used[1]!.outputTokens,
    });
    expect(summarizerCost.costUsd).toBeCloseTo(result.costUsd! + second.costUsd!, 10);
    await memfold.close();

    const offline = await compactOnce({ env: {} });
    expect((await inspectConversation(offline.memfold, 'c')).summarizerCost).toMatchObject({ model: 'extractive', recorded: 1, costUsd: 0 });
    await offline.memfold.close();
    const unknown = await compactOnce({ env: remote('my-local-model') });
    expect((await inspectConversation(unknown.memfold, 'c')).summarizerCost).toMatchObject({ price: null, recorded: 1, costUsd: null });
    await unknown.memfold.close();
  });
});
