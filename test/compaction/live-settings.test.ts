/**
 * Settings changed at run time through memfold.configure: the next compaction, usage and context_warning follow them,
 * for every conversation or for one; a bad change is refused naming the field and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../src/errors.js';
import { createMemfold, type MemfoldEvent } from '../../src/memfold.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import { orderChat } from '../support/messages.js';

async function open(events: MemfoldEvent[] = [], summarizer?: Summarizer) {
  return createMemfold({
    store: 'memory',
    env: {},
    compaction: { contextWindow: 8_000 },
    onEvent: (e) => events.push(e),
    ...(summarizer ? { summarizer } : {}),
  });
}

describe('live settings', () => {
  it('a smaller window set at run time makes the next compaction run, with the trigger and target that window brings', async () => {
    const memfold = await open();
    await memfold.append('c', orderChat(20));
    expect((await memfold.compact('c')).skipReason).toBe('below_trigger');
    const before = memfold.compactor.settings;

    const now = memfold.configure({ contextWindow: 2_000 });
    expect(now).toMatchObject({ contextWindow: 2_000, trigger: 1_600 });
    expect(now.targetTokens).toBeLessThan(before.targetTokens);
    expect(memfold.compactor.settings).toBe(now);
    expect(await memfold.usage('c')).toMatchObject({ contextWindow: 2_000, trigger: 1_600, targetTokens: now.targetTokens });
    const result = await memfold.compact('c');
    expect(result.status).toBe('compacted');
    expect(result.tokensAfter).toBeLessThan(now.trigger);

    // `undefined` puts a key back: the window returns to its default (128,000), and the trigger with it.
    expect(memfold.configure({ contextWindow: undefined })).toMatchObject({ contextWindow: 128_000, trigger: 102_400 });
    await memfold.close();
  });

  it('settings of one conversation change only that conversation, its warning mark included', async () => {
    const events: MemfoldEvent[] = [];
    const memfold = await open(events);
    memfold.configure({ contextWindow: 2_000, warnAt: 0.5 }, { conversationId: 'small' });
    expect(memfold.compactor.settingsOf('small')).toMatchObject({ contextWindow: 2_000, warnAt: 0.5 });
    expect(memfold.compactor.settingsOf('large')).toBe(memfold.compactor.settings);

    await memfold.append('small', orderChat(20));
    await memfold.append('large', orderChat(20));
    const warned = events.filter((e) => e.type === 'context_warning');
    expect(warned).toEqual([expect.objectContaining({ conversationId: 'small', threshold: 1_000 })]);
    expect((await memfold.compact('small')).status).toBe('compacted');
    expect((await memfold.compact('large')).skipReason).toBe('below_trigger');

    // A change of the shared settings keeps the conversation's own over them.
    memfold.configure({ keepFirstTurns: 0 });
    expect(memfold.compactor.settingsOf('small')).toMatchObject({ contextWindow: 2_000, keepFirstTurns: 0 });
    await memfold.close();
  });

  it('refuses a bad change naming the field, and keeps the settings as they were', async () => {
    const memfold = await open();
    const before = memfold.compactor.settings;
    expect(() => memfold.configure({ targetTokens: 9_000 })).toThrow(/compaction\.targetTokens: must be < trigger \(6400\)/);
    expect(() => memfold.configure({ contextWindow: 'big' as unknown as number })).toThrow(InvalidConfigError);
    expect(() => memfold.configure({ windowSize: 1 } as never)).toThrow(/compaction\.windowSize: unknown setting/);
    expect(() => memfold.configure({ contextWindow: 2_000 }, { conversationId: '' })).toThrow(/conversationId/);
    expect(memfold.compactor.settings).toBe(before);
    await memfold.close();
  });

  it("refuses settings that leave the summarizer's window no room for a chunk, before they apply", async () => {
    const model: Summarizer = {
      id: 'small-model',
      contextWindow: 6_000,
      promptOverhead: () => 'Summarize.',
      summarize: async () => ({ text: 'summary', usage: { inputTokens: 1, outputTokens: 1 }, model: 'small-model' }),
    };
    const memfold = await open([], model);
    expect(() => memfold.configure({ maxSummaryTokens: 2_500 })).toThrow(/leaves no room for a chunk/);
    expect(() => memfold.configure({ maxSummaryTokens: 2_500 }, { conversationId: 'c' })).toThrow(/leaves no room for a chunk/);
    expect(memfold.compactor.settingsOf('c').maxSummaryTokens).toBe(memfold.compactor.settings.maxSummaryTokens);
    await memfold.close();
  });
});
