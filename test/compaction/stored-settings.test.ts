/**
 * A conversation's stored settings between two memfold instances on one store (two processes, as far as memfold can
 * tell: they share nothing but the store). `configure(..., { conversationId })` stores by default and the other
 * instance's next compaction, usage, context and compact tool follow; `persist: false` stays in its instance, over the
 * stored ones; a bad change is refused on the call and stores nothing; stored settings that do not hold over an
 * instance's own settings fail its compaction naming the setting and the conversation, and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { defaultTrigger } from '../../src/compaction/compaction-settings-defaults.js';
import { InvalidConfigError, MemfoldError } from '../../src/errors.js';
import { createMemfold, type MemfoldOptions } from '../../src/memfold.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createInMemoryPersistenceState } from '../../src/persistence/in-memory/in-memory-tables.js';
import { orderChat } from '../support/messages.js';

/** Two instances on one store, each with its own settings. */
async function pair(options: { a?: MemfoldOptions['compaction']; b?: MemfoldOptions['compaction'] } = {}) {
  const state = createInMemoryPersistenceState();
  const open = (compaction: MemfoldOptions['compaction'] = {}) =>
    createMemfold({ store: 'memory', env: {}, persistence: createInMemoryPersistence({ state }), compaction });
  const a = await open(options.a);
  const b = await open(options.b);
  return { a, b, close: () => Promise.all([a.close(), b.close()]) };
}

describe('stored conversation settings', () => {
  it("one instance's window is the other's: usage, compact and the compact tool's floor", async () => {
    const { a, b, close } = await pair();
    const set = await a.configure({ contextWindow: 4_096 }, { conversationId: 'c' });
    expect(set).toMatchObject({ contextWindow: 4_096, trigger: defaultTrigger(4_096) });
    await a.append('c', orderChat(55));
    await a.append('t', orderChat(55));
    await a.configure({ contextWindow: 4_096 }, { conversationId: 't' });

    expect(await b.usage('c')).toMatchObject({ contextWindow: 4_096, trigger: defaultTrigger(4_096), next: 'compact' });
    expect(await b.conversationSettings('c')).toMatchObject({ stored: { contextWindow: 4_096 }, settings: { contextWindow: 4_096 } });
    // The tool was made before it knew: its floor is read when it runs.
    const tool = b.compactTool('t');
    expect((await tool.execute({})).output).toMatch(/^Compacted: /);
    expect((await b.compact('c')).status).toBe('compacted');
    // The other instance's later change is read by the next compaction here.
    await a.configure({ contextWindow: 128_000 }, { conversationId: 'c' });
    expect((await b.usage('c')).contextWindow).toBe(128_000);
    await close();
  });

  it('persist: false stays in its instance and wins there over the stored settings', async () => {
    const { a, b, close } = await pair();
    await a.configure({ contextWindow: 8_192 }, { conversationId: 'c' });
    expect(b.configure({ warnAt: 0.5 }, { conversationId: 'c', persist: false })).toMatchObject({ warnAt: 0.5 });
    expect(b.configure({ contextWindow: 16_384 }, { conversationId: 'c', persist: false }).contextWindow).toBe(16_384);
    expect((await b.usage('c')).contextWindow).toBe(16_384);
    expect((await a.usage('c')).contextWindow).toBe(8_192);
    expect((await a.conversationSettings('c')).stored).toStrictEqual({ contextWindow: 8_192 });
    await close();
  });

  it('merges over what is stored; undefined removes a key; resetSettings removes them all', async () => {
    const { a, b, close } = await pair();
    await a.configure({ contextWindow: 8_192, sessionScope: 'fixedCount' }, { conversationId: 'c' });
    await b.configure({ keepSessions: 3, sessionScope: undefined }, { conversationId: 'c' });
    expect((await a.conversationSettings('c')).stored).toStrictEqual({ contextWindow: 8_192, keepSessions: 3 });
    expect(await b.resetSettings('c')).toBe(true);
    expect(await a.conversationSettings('c')).toMatchObject({ stored: undefined, settings: { contextWindow: 128_000 } });
    expect(await a.resetSettings('c')).toBe(false);
    await close();
  });

  it('changes made at once in one instance are stored one after another: none is lost', async () => {
    const { a, b, close } = await pair();
    await Promise.all([
      a.configure({ contextWindow: 8_192 }, { conversationId: 'c' }),
      a.configure({ keepSessions: 3 }, { conversationId: 'c' }),
      a.configure({ sessionScope: 'fixedCount' }, { conversationId: 'c' }),
    ]);
    expect((await b.conversationSettings('c')).stored).toStrictEqual({ contextWindow: 8_192, keepSessions: 3, sessionScope: 'fixedCount' });
    await close();
  });

  it('refuses a bad change on the call, naming the setting, and stores nothing', async () => {
    const { a, b, close } = await pair();
    await a.configure({ contextWindow: 8_192 }, { conversationId: 'c' });
    expect(() => a.configure({ targetTokens: 9_000 }, { conversationId: 'c' })).toThrow(/compaction\.targetTokens: must be < trigger/);
    expect(() => a.configure({ windowSize: 1 } as never, { conversationId: 'c' })).toThrow(/compaction\.windowSize: unknown setting/);
    expect((await b.conversationSettings('c')).stored).toStrictEqual({ contextWindow: 8_192 });
    await close();
  });

  it('a write the store refuses rejects, and the instance keeps the settings it had', async () => {
    const persistence = createInMemoryPersistence();
    const failing = {
      ...persistence,
      setConversationSettings: () => Promise.reject(new MemfoldError('persistence_error', 'the disk is full')),
    };
    const memfold = await createMemfold({ store: 'memory', env: {}, persistence: failing });
    const change = memfold.configure({ contextWindow: 4_096 }, { conversationId: 'c' });
    // In force at once, on the call...
    expect(memfold.compactor.settingsOf('c').contextWindow).toBe(4_096);
    await expect(change).rejects.toThrow('the disk is full');
    // ...and put back when the store refused it.
    expect(memfold.compactor.settingsOf('c').contextWindow).toBe(128_000);
    expect((await memfold.usage('c')).contextWindow).toBe(128_000);
    await memfold.close();
  });

  it("stored settings that do not hold over an instance's own fail its compaction and usage, naming both", async () => {
    // b's own target (30,000) is over the trigger the stored window brings.
    const { a, b, close } = await pair({ b: { targetTokens: 30_000 } });
    await a.append('c', orderChat(5));
    await a.append('other', orderChat(5));
    await a.configure({ contextWindow: 4_096 }, { conversationId: 'c' });
    const result = await b.compact('c');
    expect(result).toMatchObject({ status: 'failed', failureCode: 'invalid_input' });
    expect(result.error).toMatch(/compaction\.targetTokens: must be < trigger .*stored settings of conversation "c"/);
    await expect(b.usage('c')).rejects.toBeInstanceOf(InvalidConfigError);
    // Other conversations are not touched.
    expect((await b.compact('other')).skipReason).toBe('below_trigger');
    await close();
  });
});
