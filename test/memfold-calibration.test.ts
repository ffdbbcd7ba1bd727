/**
 * memfold.observeUsage on createMemfold({ store: 'memory' }): the assistant's reported prompt tokens over memfold's
 * count of context() calibrate the conversation's counts (usage, what compact() decides, the context_warning count),
 * clamped to [1, 5]; every commit that replaces the live rows (compaction, re-summarization, a reconcile that
 * finishes an operation) drops the factor; bad input is refused naming the field and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../src/archive/in-memory/in-memory-archive.js';
import { createHashingEmbedder } from '../src/embedding/hashing-embedder.js';
import { InvalidArgumentError } from '../src/errors.js';
import { createMemfold, type Memfold, type MemfoldEvent } from '../src/memfold.js';
import type { ConversationMessage, NewMessage } from '../src/conversation/types.js';
import { createInMemoryPersistence } from '../src/persistence/in-memory/in-memory-persistence.js';
import type { PersistenceProvider } from '../src/persistence/persistence-provider.js';
import { createTokenCounter } from '../src/tokens/create-token-counter.js';
import { dialogue } from './support/messages.js';
import { withFaults } from './support/stack.js';

/** Trigger 1,600, warning at 1,400, target 1,000. */
const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300, targetTokens: 1_000, minFreedTokens: 200 };

async function open(options: { persistence?: PersistenceProvider; archive?: ReturnType<typeof withFaults> } = {}) {
  const events: MemfoldEvent[] = [];
  const memfold = await createMemfold({
    store: 'memory',
    env: {},
    tokens: createTokenCounter({ mode: 'chars4' }),
    compaction: settings,
    onEvent: (event) => events.push(event),
    ...options,
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

const counted = (memfold: Memfold, messages: readonly ConversationMessage[]) => messages.reduce((sum, m) => sum + memfold.tokens.countMessage(m), 0);
/** memfold's own count of what the application sends: context(), tool outputs cut. */
const ownCount = async (memfold: Memfold, id: string) => counted(memfold, await memfold.context(id));
const warnings = (events: MemfoldEvent[]) => events.filter((e) => e.type === 'context_warning');

describe('memfold.observeUsage', () => {
  it("sets the factor from the prompt tokens over memfold's count of context(), and usage() counts with it", async () => {
    const { memfold } = await open();
    const id = 'tools';
    await memfold.append(id, [
      { role: 'user', content: 'Run the report.' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'report', arguments: '{}' } }] },
      { role: 'tool', toolCallId: 'call_1', content: Array.from({ length: 200 }, (_, i) => `row ${i}`).join('\n') },
      { role: 'assistant', content: 'The report has 200 rows.' },
    ]);
    const history = await memfold.history(id);
    const own = await ownCount(memfold, id);
    // The request the application built shows the tool output cut: that is what the provider counted.
    expect(own).toBeLessThan(counted(memfold, history));

    const calibration = await memfold.observeUsage(id, { promptTokens: own * 2 + 7 });
    expect(calibration).toStrictEqual({ factor: (own * 2 + 7) / own, promptTokens: own * 2 + 7, estimatedTokens: own, observedAt: expect.any(String) });
    const usage = await memfold.usage(id);
    expect(usage.calibration).toBe(calibration.factor);
    // Each message's count times the factor, rounded: within half a token a message of the whole history's.
    expect(Math.abs(usage.tokens - calibration.factor * counted(memfold, history))).toBeLessThanOrEqual(history.length / 2);
    expect(usage.percent).toBeCloseTo((usage.tokens / 2_000) * 100, 10);
    expect(await memfold.persistence.getTokenCalibration(id)).toStrictEqual(calibration);
    await memfold.close();
  });

  it('compacts a conversation under the trigger by its estimate but over it by the observed usage, then drops the factor', async () => {
    const { memfold } = await open();
    const id = 'under-by-estimate';
    await memfold.append(id, dialogue(12));
    const before = await memfold.usage(id);
    expect(before).toMatchObject({ calibration: 1, next: 'none' });
    expect(before.tokens).toBeLessThan(before.trigger);
    expect(await memfold.compact(id)).toMatchObject({ status: 'skipped', skipReason: 'below_trigger' });

    // The provider counted half as much again (tool definitions, another tokenizer): over the trigger.
    await memfold.observeUsage(id, { promptTokens: Math.round((await ownCount(memfold, id)) * 1.5) });
    const calibrated = await memfold.usage(id);
    expect(calibrated.tokens).toBeGreaterThanOrEqual(calibrated.trigger);
    expect(calibrated.next).toBe('compact');
    const result = await memfold.compact(id);
    expect(result).toMatchObject({ status: 'compacted', tokensBefore: calibrated.tokens });
    expect(result.tokensAfter).toBeLessThan(calibrated.trigger);

    // The context the factor was measured on is gone: counted as memfold counts it until the next observation.
    expect(await memfold.persistence.getTokenCalibration(id)).toBeUndefined();
    const after = await memfold.usage(id);
    expect(after.calibration).toBe(1);
    expect(after.tokens).toBe(counted(memfold, await memfold.history(id)));
    await memfold.close();
  });

  it("clamps the factor to [1, 5]: never below memfold's own count, at most five times it", async () => {
    const { memfold } = await open();
    const id = 'clamped';
    await memfold.append(id, sized(6, 100));
    const own = await ownCount(memfold, id);
    const plain = (await memfold.usage(id)).tokens;

    expect(await memfold.observeUsage(id, { promptTokens: Math.floor(own / 2) })).toMatchObject({ factor: 1, estimatedTokens: own });
    expect(await memfold.usage(id)).toMatchObject({ calibration: 1, tokens: plain, next: 'none' });

    expect(await memfold.observeUsage(id, { promptTokens: own * 10 })).toMatchObject({ factor: 5, promptTokens: own * 10 });
    const five = await memfold.usage(id);
    expect(five.calibration).toBe(5);
    expect(five.tokens).toBe(plain * 5);
    expect(five.next).toBe('compact');
    await memfold.close();
  });

  it('the context_warning count is calibrated: the observation itself, then each append, at the factor', async () => {
    const { memfold, events } = await open();
    const id = 'warned';
    await memfold.append(id, sized(10, 100));
    const own = await ownCount(memfold, id);
    expect(own).toBeLessThan(1_100);
    // 1.25 × about 1,040: under the 1,400 mark, no warning yet.
    await memfold.observeUsage(id, { promptTokens: Math.round(own * 1.25) });
    expect(warnings(events)).toEqual([]);
    // One more message of about 100 tokens: about 1,140 by memfold's count, over 1,400 calibrated.
    await memfold.append(id, sized(1, 100, 10));
    expect((await memfold.persistence.loadHistory(id)).reduce((sum, m) => sum + memfold.tokens.countMessage(m), 0)).toBeLessThan(1_400);
    const usage = await memfold.usage(id);
    expect(warnings(events)).toEqual([{ type: 'context_warning', conversationId: id, tokens: usage.tokens, threshold: 1_400 }]);

    // An observation that puts the context over the mark warns at once.
    const other = 'observed-over';
    await memfold.append(other, sized(6, 100));
    await memfold.observeUsage(other, { promptTokens: 1_500 });
    expect(warnings(events).at(-1)).toEqual({ type: 'context_warning', conversationId: other, tokens: (await memfold.usage(other)).tokens, threshold: 1_400 });
    await memfold.close();
  });

  it('is dropped by an operator re-summarization, which replaces the clip-archive row', async () => {
    const { memfold } = await open();
    const id = 'resummarized';
    await memfold.append(id, sized(20, 100));
    expect((await memfold.compact(id)).status).toBe('compacted');
    expect((await memfold.compactor.frontier(id)).filter((b) => b.depth === 0).length).toBeGreaterThanOrEqual(2);
    await memfold.observeUsage(id, { promptTokens: (await ownCount(memfold, id)) * 2 });
    expect((await memfold.usage(id)).calibration).toBe(2);
    await memfold.compactor.resummarizeDepth(id, 0);
    expect((await memfold.usage(id)).calibration).toBe(1);
    await memfold.close();
  });

  it('is dropped by a reconcile that finishes an interrupted compaction', async () => {
    const faults: { failCommit?: boolean; failUndo?: boolean } = {};
    const inner = createInMemoryPersistence();
    const persistence: PersistenceProvider = {
      ...inner,
      commitCompaction: (commit) => (faults.failCommit ? Promise.reject(new Error('injected commit failure')) : inner.commitCompaction(commit)),
    };
    const archive = withFaults(createInMemoryArchive({ embedder: createHashingEmbedder() }), faults);
    const { memfold } = await open({ persistence, archive });
    const id = 'reconciled';
    await memfold.append(id, sized(20, 100));
    // A compaction whose commit and undo both fail, then the journal as a crash after archiving leaves it.
    Object.assign(faults, { failCommit: true, failUndo: true });
    expect(await memfold.compact(id)).toMatchObject({ status: 'failed', failureCode: 'commit_failed' });
    Object.assign(faults, { failCommit: false, failUndo: false });
    const [pending] = await persistence.listPendingOperations(id);
    await persistence.recordOperation({ ...pending!, status: 'archived' });

    await memfold.observeUsage(id, { promptTokens: (await ownCount(memfold, id)) * 3 });
    expect((await memfold.usage(id)).calibration).toBe(3);
    expect(await memfold.reconcile(id)).toEqual([expect.objectContaining({ action: 'committed' })]);
    expect((await memfold.usage(id)).calibration).toBe(1);
    await memfold.close();
  });

  it('refuses bad input naming the field, and a conversation with no messages, changing nothing', async () => {
    const { memfold, events } = await open();
    await memfold.append('c', sized(4, 100));
    for (const bad of ['', 42, undefined]) {
      const attempt = memfold.observeUsage(bad as string, { promptTokens: 100 });
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ field: 'conversationId' });
    }
    for (const promptTokens of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '100', undefined, null, 2 ** 31]) {
      const attempt = memfold.observeUsage('c', { promptTokens } as never);
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ field: 'promptTokens', message: expect.stringContaining('positive integer') });
    }
    for (const usage of [undefined, null, 100, [100]]) {
      await expect(memfold.observeUsage('c', usage as never)).rejects.toMatchObject({ field: 'usage' });
    }
    expect(await memfold.persistence.getTokenCalibration('c')).toBeUndefined();

    // Nothing to calibrate against: a clear error, no row, no conversation created, no event.
    const empty = memfold.observeUsage('nobody', { promptTokens: 100 });
    await expect(empty).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(empty).rejects.toMatchObject({ field: 'conversationId', message: expect.stringContaining('has no messages') });
    expect(await memfold.persistence.getTokenCalibration('nobody')).toBeUndefined();
    expect((await memfold.persistence.listConversations()).map((c) => c.id)).toEqual(['c']);
    expect(await memfold.usage('nobody')).toMatchObject({ tokens: 0, calibration: 1 });
    expect(events).toEqual([]);
    await memfold.close();
  });
});
