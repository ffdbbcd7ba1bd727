/**
 * memfold.usage and the context_warning from append, on createMemfold({ store: 'memory' }): usage counts what
 * compact counts and its `next` says what compact() then does; append warns once per crossing of warnAt × window,
 * again after a compaction brought the context below, and keeps a running count instead of reloading the history.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../src/errors.js';
import { createMemfold, type Memfold, type MemfoldEvent } from '../src/memfold.js';
import type { CompactionResult } from '../src/compaction/compaction-result.js';
import type { NextCompaction } from '../src/compaction/compactor.js';
import type { CompactionSettings } from '../src/compaction/compaction-settings.js';
import type { NewMessage } from '../src/conversation/types.js';
import { createInMemoryPersistence } from '../src/persistence/in-memory/in-memory-persistence.js';
import type { PersistenceProvider } from '../src/persistence/persistence-provider.js';
import { createTokenCounter } from '../src/tokens/create-token-counter.js';
import { dialogue } from './support/messages.js';

/** Target and minimum freed given, so the cases below do not move with their defaults. */
const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300, targetTokens: 1_000, minFreedTokens: 200 };

async function open(
  options: { compaction?: Partial<CompactionSettings>; persistence?: PersistenceProvider } = {},
): Promise<{ memfold: Memfold; events: MemfoldEvent[] }> {
  const events: MemfoldEvent[] = [];
  const memfold = await createMemfold({
    store: 'memory',
    env: {},
    tokens: createTokenCounter({ mode: 'chars4' }),
    compaction: options.compaction ?? settings,
    ...(options.persistence ? { persistence: options.persistence } : {}),
    onEvent: (event) => events.push(event),
  });
  return { memfold, events };
}

/** `count` messages of about `tokens` tokens each (chars/4), alternating user and assistant. */
function sized(count: number, tokens: number, from = 0): NewMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `message ${from + i} ${'x'.repeat(tokens * 4 - 20)}`,
  }));
}

/** What compact() does for each `next` usage announces. */
function expectCompactFollows(next: NextCompaction, result: CompactionResult): void {
  const expected = {
    none: { status: 'skipped', skipReason: 'below_trigger' },
    clear_tool_outputs: { status: 'compacted', tier: 2 },
    compact: { status: 'compacted', tier: 3 },
    too_little_to_free: { status: 'skipped', skipReason: 'too_little_to_free' },
    nothing_to_compact: { status: 'skipped', skipReason: 'nothing_to_compact' },
    paused: { status: 'skipped', skipReason: 'paused' },
  }[next];
  expect(result).toMatchObject(expected);
}

const warnings = (events: MemfoldEvent[]) => events.filter((e) => e.type === 'context_warning');

describe('memfold.usage', () => {
  it('refuses a bad conversation id naming the field', async () => {
    const { memfold } = await open();
    for (const bad of ['', 42, undefined]) {
      await expect(memfold.usage(bad as string)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(memfold.usage(bad as string)).rejects.toMatchObject({ field: 'conversationId' });
    }
    await expect(memfold.compactor.isPaused('')).rejects.toMatchObject({ field: 'conversationId' });
    await expect(memfold.compactor.resume('')).rejects.toMatchObject({ field: 'conversationId' });
    await memfold.close();
  });

  it('reports an unknown conversation as empty', async () => {
    const { memfold } = await open();
    expect(await memfold.usage('nobody')).toEqual({
      conversationId: 'nobody',
      tokens: 0,
      calibration: 1,
      contextWindow: 2_000,
      percent: 0,
      trigger: 1_600,
      targetTokens: 1_000,
      warnAt: 0.7,
      warnTokens: 1_400,
      next: 'none',
    });
    await memfold.close();
  });

  it('counts the live history as compaction does: tool outputs whole, the clip-archive included', async () => {
    const { memfold } = await open();
    const id = 'counted';
    await memfold.append(id, [
      { role: 'user', content: 'Run the report.' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'report', arguments: '{}' } }] },
      { role: 'tool', toolCallId: 'call_1', content: Array.from({ length: 200 }, (_, i) => `row ${i}`).join('\n') },
    ]);
    const history = await memfold.history(id);
    const counted = history.reduce((sum, m) => sum + memfold.tokens.countMessage(m), 0);
    const usage = await memfold.usage(id);
    expect(usage.tokens).toBe(counted);
    // The context view cuts the tool output to 50 lines; usage counts what compaction counts.
    const shown = (await memfold.context(id)).reduce((sum, m) => sum + memfold.tokens.countMessage(m), 0);
    expect(usage.tokens).toBeGreaterThan(shown);
    expect(usage.percent).toBeCloseTo((counted / 2_000) * 100, 10);

    await memfold.append(id, dialogue(30));
    expect((await memfold.compact(id)).status).toBe('compacted');
    const after = await memfold.history(id);
    expect(after[0]!.kind).toBe('clip_archive');
    expect((await memfold.usage(id)).tokens).toBe(after.reduce((sum, m) => sum + memfold.tokens.countMessage(m), 0));
    await memfold.close();
  });

  it('`next` says what the next compact() does: none, compact, nothing_to_compact, too_little_to_free, paused', async () => {
    const { memfold } = await open();
    const cases: Array<[string, NewMessage[], NextCompaction]> = [
      ['below', dialogue(2), 'none'],
      ['over', dialogue(30), 'compact'],
      // Four messages of 500 tokens: over the trigger, and all of them the kept tail.
      ['all-tail', sized(4, 500), 'nothing_to_compact'],
    ];
    for (const [id, messages, next] of cases) {
      await memfold.append(id, messages);
      const usage = await memfold.usage(id);
      expect(usage.next, id).toBe(next);
      expectCompactFollows(usage.next, await memfold.compact(id));
    }
    await memfold.close();

    // A tail of 10 messages leaves one message of 150 tokens to compact: less than the new clip-archive costs.
    const long = await open({ compaction: { ...settings, keepRecentMessages: 10 } });
    await long.memfold.append('little', sized(13, 145));
    const little = await long.memfold.usage('little');
    expect(little).toMatchObject({ next: 'too_little_to_free' });
    expect(little.tokens).toBeGreaterThanOrEqual(little.trigger);
    expectCompactFollows(little.next, await long.memfold.compact('little'));
    await long.memfold.close();
  });

  it("reports the loop guard's pause as `paused`, and a forced compaction is still possible", async () => {
    const { memfold } = await open();
    const big = (turn: number): NewMessage[] => [
      { role: 'user', content: `Question ${turn}: ${'a long pasted document line '.repeat(85)}` },
      { role: 'assistant', content: `Answer ${turn}: ${'a long detailed reply sentence '.repeat(80)}` },
    ];
    await memfold.append('g', [0, 1, 2].flatMap(big));
    expect((await memfold.compact('g')).status).toBe('compacted');
    await memfold.append('g', big(3));
    expect((await memfold.compact('g')).status).toBe('compacted');
    await memfold.append('g', big(4));
    const usage = await memfold.usage('g');
    expect(usage.next).toBe('paused');
    expectCompactFollows(usage.next, await memfold.compact('g'));
    await memfold.compactor.resume('g');
    expect((await memfold.usage('g')).next).toBe('compact');
    await memfold.close();
  });
});

describe('context_warning from append', () => {
  it('fires once when an append crosses warnAt × window, with the count usage gives', async () => {
    const { memfold, events } = await open();
    const id = 'warned';
    // 100 tokens a message: 13 stay below 1,400, the 14th reaches it.
    for (let i = 0; i < 13; i++) await memfold.append(id, sized(1, 100, i));
    expect(warnings(events)).toEqual([]);
    await memfold.append(id, sized(1, 100, 13));
    const usage = await memfold.usage(id);
    expect(usage.tokens).toBeGreaterThanOrEqual(1_400);
    expect(warnings(events)).toEqual([{ type: 'context_warning', conversationId: id, tokens: usage.tokens, threshold: 1_400 }]);
    // Further appends above the mark, and a compact() that counts the history (still under the trigger), add none.
    await memfold.append(id, sized(1, 50, 14));
    expect(await memfold.compact(id)).toMatchObject({ status: 'skipped', skipReason: 'below_trigger' });
    await memfold.append(id, sized(1, 50, 15));
    expect(warnings(events)).toHaveLength(1);
    await memfold.close();
  });

  it('fires again after a compaction brought the context below the mark and appends cross it again', async () => {
    const { memfold, events } = await open();
    const id = 'again';
    await memfold.append(id, dialogue(30));
    expect(warnings(events)).toHaveLength(1);
    const compacted = await memfold.compact(id);
    expect(compacted.status).toBe('compacted');
    expect(compacted.tokensAfter).toBeLessThan(1_400);
    expect(warnings(events)).toHaveLength(1);
    let turn = 30;
    while ((await memfold.usage(id)).tokens < 1_400) {
      expect(warnings(events)).toHaveLength(1);
      await memfold.append(id, dialogue(1, turn++));
    }
    expect(warnings(events)).toHaveLength(2);
    expect(warnings(events)[1]).toMatchObject({ conversationId: id, tokens: (await memfold.usage(id)).tokens });
    await memfold.close();
  });

  it('loads the history once per conversation to start its count, and once more after a compaction', async () => {
    let loads = 0;
    const inner = createInMemoryPersistence();
    const persistence: PersistenceProvider = {
      ...inner,
      loadHistory: (conversationId) => {
        loads++;
        return inner.loadHistory(conversationId);
      },
    };
    const { memfold } = await open({ persistence });
    for (let turn = 0; turn < 20; turn++) await memfold.append('cost', dialogue(1, turn));
    expect(loads).toBe(1);
    await memfold.append('other', dialogue(1));
    expect(loads).toBe(2);
    // compact() loads the history to plan (and restarts the count from it): the next append loads nothing.
    expect((await memfold.compact('cost')).status).toBe('compacted');
    const afterCompact = loads;
    await memfold.append('cost', dialogue(1, 20));
    expect(loads).toBe(afterCompact + 1);
    await memfold.append('cost', dialogue(1, 21));
    expect(loads).toBe(afterCompact + 1);
    await memfold.close();
  });
});
