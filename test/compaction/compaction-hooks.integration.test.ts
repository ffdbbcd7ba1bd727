/**
 * beforeCompact / afterCompact and the compaction_started / compaction_ended events, through createMemfold: a hook
 * cancels (nothing written), supplies the summary (no summarizer request for the fold), fails (nothing lost), and
 * hears every result; a focus reaches the hook and is bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BeforeCompactInfo, CompactionHooks } from '../../src/compaction/compaction-hooks.js';
import type { CompactionResult } from '../../src/compaction/compaction-result.js';
import { InvalidConfigError } from '../../src/errors.js';
import { createMemfold, type MemfoldEvent } from '../../src/memfold.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { orderChat } from '../support/messages.js';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.setBehavior(behaviors.ok('Orders: the user checks ORD-500 to ORD-519.'));
});
afterAll(() => fake.close());

/** A memfold in memory summarizing through the fake server, with `hooks`; 20 order turns appended. */
async function open(hooks: CompactionHooks) {
  const events: MemfoldEvent[] = [];
  const memfold = await createMemfold({
    store: 'memory',
    env: {},
    config: { openaiBaseUrl: fake.baseURL, summaryModel: 'fake-summarizer', modelMaxRetries: 0 },
    compaction: { contextWindow: 2_000 },
    hooks,
    onEvent: (event) => events.push(event),
  });
  await memfold.append('orders', orderChat(20));
  const ofType = <T extends MemfoldEvent['type']>(type: T) => events.filter((e) => e.type === type) as Array<Extract<MemfoldEvent, { type: T }>>;
  return { memfold, events, ofType };
}

const summaries = (memfold: Awaited<ReturnType<typeof open>>['memfold']) => memfold.archive.list({ conversationId: 'orders', kind: 'summary' });

describe('compaction hooks', () => {
  it('beforeCompact cancels: skipped with its reason, nothing archived, no request, no afterCompact', async () => {
    const seen: BeforeCompactInfo[] = [];
    const after: CompactionResult[] = [];
    const { memfold, ofType } = await open({
      beforeCompact: (info) => {
        seen.push(info);
        return { cancel: true, reason: 'the user is mid-task' };
      },
      afterCompact: (result) => void after.push(result),
    });
    const before = await memfold.history('orders');
    const requests = fake.requests.length;
    const result = await memfold.compact('orders', { force: true, focus: 'order numbers' });
    expect(result).toMatchObject({ status: 'skipped', skipReason: 'cancelled', hook: { decision: 'cancelled', reason: 'the user is mid-task' } });
    expect(seen).toEqual([
      expect.objectContaining({ conversationId: 'orders', tier: 3, force: true, focus: 'order numbers', trigger: memfold.compactor.settings.trigger }),
    ]);
    expect(seen[0]!.messagesToSummarize).toBeGreaterThan(0);
    expect(seen[0]!.tokensBefore).toBe(result.tokensBefore);
    expect(await memfold.history('orders')).toEqual(before);
    expect(await summaries(memfold)).toEqual([]);
    expect(fake.requests.length).toBe(requests);
    expect(after).toEqual([]);
    expect(ofType('compaction_started')).toEqual([]);
    await memfold.close();
  });

  it('beforeCompact supplies the summary: one batch holds it, the fold asks no model, the result says so', async () => {
    const text = 'The user reviewed orders ORD-500 to ORD-514; ORD-503 was refunded.';
    const { memfold } = await open({ beforeCompact: () => ({ summary: text }) });
    const requests = fake.requests.length;
    const result = await memfold.compact('orders', { force: true });
    expect(result).toMatchObject({ status: 'compacted', tier: 3, hook: { decision: 'supplied' }, models: ['hook'], modelCalls: 0, summarizerInputTokens: 0 });
    expect(result.archivedMessages).toBeGreaterThan(2);
    expect(result.batches).toHaveLength(1);
    expect(result.batches[0]!.content).toContain(text);
    expect(fake.requests.length).toBe(requests);
    const clip = (await memfold.context('orders')).find((m) => m.kind === 'clip_archive');
    expect(clip?.content).toContain(text);
    await memfold.close();
  });

  it('without hooks the model answers, and the result names it', async () => {
    const { memfold } = await open({});
    const result = await memfold.compact('orders', { force: true });
    expect(result).toMatchObject({ status: 'compacted', models: ['fake-summarizer'] });
    expect(result.modelCalls).toBeGreaterThan(0);
    expect(result.hook).toBeUndefined();
    await memfold.close();
  });

  it('a beforeCompact that throws or answers nonsense fails the compaction (hook_failed) and changes nothing', async () => {
    for (const [hook, message] of [
      [
        () => {
          throw new Error('policy service down');
        },
        'policy service down',
      ],
      [() => ({ summary: '  ' }), 'beforeCompact.summary: must be a non-empty string'],
      [() => ({ cancel: 'yes' }), 'beforeCompact.cancel: must be true when given'],
    ] as const) {
      const { memfold } = await open({ beforeCompact: hook as NonNullable<CompactionHooks['beforeCompact']> });
      const before = await memfold.history('orders');
      const result = await memfold.compact('orders', { force: true });
      expect(result).toMatchObject({ status: 'failed', failureCode: 'hook_failed' });
      expect(result.error).toContain(message);
      expect(await memfold.history('orders')).toEqual(before);
      expect(await summaries(memfold)).toEqual([]);
      await memfold.close();
    }
  });

  it('compaction_started and compaction_ended frame each compaction that ran; afterCompact gets its result; a throwing afterCompact is reported', async () => {
    const after: CompactionResult[] = [];
    const { memfold, events, ofType } = await open({
      afterCompact: (result) => {
        after.push(result);
        throw new Error('metrics sink full');
      },
    });
    const result = await memfold.compact('orders', { force: true });
    expect(result.status).toBe('compacted');
    expect(after).toEqual([result]);
    const started = ofType('compaction_started');
    const ended = ofType('compaction_ended');
    expect(started).toEqual([
      { type: 'compaction_started', conversationId: 'orders', tier: 3, tokensBefore: result.tokensBefore, summarizer: 'openai:fake-summarizer' },
    ]);
    expect(ended).toEqual([
      expect.objectContaining({
        conversationId: 'orders',
        status: 'compacted',
        tier: 3,
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
        models: ['fake-summarizer'],
        modelCalls: result.modelCalls,
        summarizerInputTokens: result.summarizerInputTokens,
      }),
    ]);
    expect(events.indexOf(started[0]!)).toBeLessThan(events.findIndex((e) => e.type === 'stage'));
    expect(events.indexOf(ended[0]!)).toBeGreaterThan(events.map((e) => e.type).lastIndexOf('stage'));
    expect(ofType('hook_failed')).toEqual([{ type: 'hook_failed', conversationId: 'orders', hook: 'afterCompact', error: 'metrics sink full' }]);

    // A skip below the trigger starts nothing.
    const skipped = await memfold.compact('orders');
    expect(skipped.status).toBe('skipped');
    expect(ofType('compaction_started')).toHaveLength(1);
    expect(after).toHaveLength(1);
    await memfold.close();
  });

  it('a focus reaches every summarizer request of the compaction, before the material', async () => {
    const { memfold } = await open({});
    const from = fake.requests.length;
    const result = await memfold.compact('orders', { force: true, focus: 'the refund of ORD-503 <transcript>' });
    expect(result.status).toBe('compacted');
    const bodies = fake.requests.slice(from).map((r) => r.body.messages.at(-1).content as string);
    expect(bodies.length).toBe(result.modelCalls);
    for (const body of bodies) {
      expect(body.startsWith('Whoever asked for this summary needs it to keep, above all: the refund of ORD-503 &lt;transcript>\n\n<')).toBe(true);
    }
    await memfold.close();
  });

  it('a focus over 400 characters fails as invalid input naming it; createMemfold refuses an unknown hook', async () => {
    const { memfold } = await open({});
    const result = await memfold.compact('orders', { force: true, focus: 'x'.repeat(401) });
    expect(result).toMatchObject({ status: 'failed', failureCode: 'invalid_input' });
    expect(result.error).toContain('focus: must be at most 400 characters (got 401)');
    await memfold.close();
    await expect(createMemfold({ store: 'memory', env: {}, hooks: { beforeCompaction: () => undefined } as CompactionHooks })).rejects.toThrow(
      InvalidConfigError,
    );
    await expect(createMemfold({ store: 'memory', env: {}, hooks: { afterCompact: 'log' } as unknown as CompactionHooks })).rejects.toThrow(
      /hooks\.afterCompact: must be a function/,
    );
  });
});
