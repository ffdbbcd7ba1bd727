/**
 * Recovery of tool-output clearings (tier 2) left unfinished, on the in-memory store: a commit whose outcome is
 * unknown is left `archived` and finished by reconcile; a clearing whose archived copy no longer matches, or that
 * stopped while `planned`, is undone (its entries deleted, the rows never changed). Crash kills at every step on
 * PostgreSQL and LanceDB are in test/durability/crash-recovery.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { toolOutputEntries } from '../../src/compaction/clearing/clear-tool-outputs.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { checkInvariants } from '../support/invariants.js';

const settings = { contextWindow: 4_000, targetTokens: 2_000, keepToolUses: 2, keepRecentMessages: 4 };

function toolTurns(count: number): NewMessage[] {
  return Array.from({ length: count }, (_, i) => {
    const n = i + 1;
    const at = (k: number) => new Date(Date.UTC(2024, 4, 1, 9, 4 * n + k)).toISOString();
    return [
      { role: 'user' as const, content: `Question ${n}`, createdAt: at(0) },
      {
        role: 'assistant' as const,
        content: '',
        toolCalls: [{ id: `call_${n}`, type: 'function' as const, function: { name: 'inventory', arguments: '{}' } }],
        createdAt: at(1),
      },
      { role: 'tool' as const, toolCallId: `call_${n}`, content: `SKU-${n} ${'shelf '.repeat(300)}`, createdAt: at(2) },
      { role: 'assistant' as const, content: `Answer ${n}`, createdAt: at(3) },
    ];
  }).flat();
}

async function open(persistence: PersistenceProvider): Promise<Memfold> {
  return createMemfold({ store: 'memory', env: {}, persistence, reconcileOnOpen: false, tokens: createTokenCounter({ mode: 'chars4' }), compaction: settings });
}

describe('reconciling a tool-output clearing', () => {
  it('a commit whose outcome is unknown is left archived, and reconcile finishes it', async () => {
    const store = createInMemoryPersistence();
    let failing = true;
    const lostAnswer = new Error('connection lost');
    const persistence: PersistenceProvider = {
      ...store,
      commitClearing: async (commit) => (failing ? Promise.reject(lostAnswer) : store.commitClearing(commit)),
      listOperations: async (id) => (failing ? Promise.reject(lostAnswer) : store.listOperations(id)),
    };
    const memfold = await open(persistence);
    const appended = await memfold.append('unknown', toolTurns(8));
    const result = await memfold.compact('unknown');
    expect(result).toMatchObject({ status: 'failed', failureCode: 'commit_failed' });
    expect(await memfold.history('unknown')).toEqual(appended);
    expect(await store.listPendingOperations('unknown')).toMatchObject([{ kind: 'clear_tool_outputs', status: 'archived' }]);

    failing = false;
    const outcomes = await memfold.reconcile('unknown');
    expect(outcomes).toMatchObject([{ action: 'committed' }]);
    const live = await memfold.history('unknown');
    const cleared = live.filter((m) => m.clearedOutputLabel !== undefined);
    expect(cleared.length).toBeGreaterThan(0);
    for (const m of cleared) expect(m.content).toContain(m.clearedOutputLabel!);
    await checkInvariants(memfold, 'unknown', appended, { toolPairs: true });
    await memfold.close();
  });

  it('undoes a clearing whose archived copy differs from the live row, or that stopped while planned', async () => {
    const persistence = createInMemoryPersistence();
    const memfold = await open(persistence);
    const appended = await memfold.append('bad', toolTurns(4));
    const outputs = appended.filter((m) => m.role === 'tool');
    const write = async (operationId: string, message: ConversationMessage, status: 'planned' | 'archived') => {
      const entries = toolOutputEntries([message], { conversationId: 'bad', operationId });
      await persistence.recordOperation({
        id: operationId,
        conversationId: 'bad',
        kind: 'clear_tool_outputs',
        status,
        messageIds: [message.id],
        labels: entries.map((e) => e.label),
      });
      await memfold.archive.write(entries);
    };
    await write('op-tampered', { ...outputs[0]!, content: 'not what was appended' }, 'archived');
    await write('op-planned', outputs[1]!, 'planned');

    const outcomes = await memfold.reconcile('bad');
    expect(outcomes).toMatchObject([
      { operationId: 'op-tampered', action: 'rolled_back', reason: expect.stringContaining('differs from the live row') },
      { operationId: 'op-planned', action: 'rolled_back', reason: 'stopped while planned' },
    ]);
    expect(await memfold.history('bad')).toEqual(appended);
    expect(await memfold.archive.list({ conversationId: 'bad' })).toEqual([]);
    await checkInvariants(memfold, 'bad', appended, { toolPairs: true });
    await memfold.close();
  });
});
