/**
 * Tiers before summarizing, through createMemfold({ store: 'memory' }): tier 2 clears old tool outputs (archived
 * verbatim first, placeholders naming their labels in the live rows) and stops there when that reaches the target,
 * with no summarizer call; tier 3 summarizes what is still too much, archiving cleared outputs as they were appended.
 * memory_read gives the original words at every stage, and every invariant holds.
 */
import { describe, expect, it } from 'vitest';
import type { ArchiveEntry, ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { outcomeOf } from '../../src/background/compaction-queue.js';
import type { Archive } from '../../src/archive/archive.js';
import { InvalidConfigError } from '../../src/errors.js';
import { createMemfold, type Memfold, type MemfoldEvent, type MemfoldOptions } from '../../src/memfold.js';
import type { CompactionSettings } from '../../src/compaction/compaction-settings.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { checkInvariants } from '../support/invariants.js';

/** Tool outputs dominate: 400 tokens each against short talk, the shape of a tool-heavy agent run. */
const settings = { contextWindow: 4_000, targetTokens: 2_000, keepToolUses: 2, keepRecentMessages: 4 };

async function open(options: Partial<MemfoldOptions> = {}): Promise<{ memfold: Memfold; events: MemfoldEvent[] }> {
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

/** Turn n: a question, a call of `tool`, its output (naming SKU-{n}), an answer; a minute a message. */
function toolTurn(n: number, options: { tool?: string; outputTokens?: number; talkTokens?: number } = {}): NewMessage[] {
  const { tool = 'inventory', outputTokens = 400, talkTokens = 10 } = options;
  const at = (k: number) => new Date(Date.UTC(2024, 4, 1, 9, 4 * n + k)).toISOString();
  // About `tokens` tokens (chars/4) of `word0 word1 ...`.
  const words = (tokens: number, word: string) => Array.from({ length: Math.ceil((tokens * 4) / (word.length + 2)) }, (_, i) => `${word}${i % 7}`).join(' ');
  return [
    { role: 'user', content: `Question ${n}: how many of item ${n}? ${words(talkTokens, 'please')}`, createdAt: at(0) },
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: `call_${n}`, type: 'function', function: { name: tool, arguments: `{"item":${n}}` } }],
      createdAt: at(1),
    },
    {
      role: 'tool',
      toolCallId: `call_${n}`,
      name: tool,
      content: `SKU-${n} stock ${100 + n} in aisle ${n}. ${words(outputTokens, 'shelf')}`,
      createdAt: at(2),
    },
    { role: 'assistant', content: `There are ${100 + n} of item ${n}. ${words(talkTokens, 'done')}`, createdAt: at(3) },
  ];
}

const turns = (from: number, to: number, options?: Parameters<typeof toolTurn>[1]) =>
  Array.from({ length: to - from + 1 }, (_, i) => toolTurn(from + i, options)).flat();

async function appendAll(memfold: Memfold, id: string, messages: NewMessage[]): Promise<ConversationMessage[]> {
  return memfold.append(id, [{ role: 'system', content: 'You keep the shop.' }, ...messages]);
}

const toolOutputs = (memfold: Memfold, id: string) => memfold.archive.list({ conversationId: id, kind: 'tool_output' });

describe('tier 2: clearing old tool outputs', () => {
  it('resolves a compaction with no summarizer call: placeholders name the labels, rows keep their ids, memory_read gives the words', async () => {
    const { memfold, events } = await open();
    const appended = await appendAll(memfold, 'shop', turns(1, 8));
    const result = await memfold.compact('shop');

    expect(result).toMatchObject({ status: 'compacted', tier: 2, modelCalls: 0, summarizerInputTokens: 0, archivedMessages: 0, batches: [] });
    expect(result.toolOutputsCleared).toBeGreaterThan(0);
    expect(result.tokensAfter).toBeLessThanOrEqual(memfold.compactor.settings.targetTokens);
    expect(result.tokensFreedByClearing).toBe(result.tokensBefore - result.tokensAfter);
    expect(result.clearingOperationId).toBe(result.operationId);

    const live = await memfold.history('shop');
    expect(live.map((m) => [m.id, m.seq, m.toolCallId])).toEqual(appended.map((m) => [m.id, m.seq, m.toolCallId]));
    const cleared = live.filter((m) => m.clearedOutputLabel !== undefined);
    expect(cleared).toHaveLength(result.toolOutputsCleared);
    // The oldest go first; the results of the last keepToolUses calls stay whole.
    expect(cleared.map((m) => m.toolCallId)).toEqual(Array.from({ length: cleared.length }, (_, i) => `call_${i + 1}`));
    expect(
      live
        .filter((m) => m.role === 'tool')
        .slice(-2)
        .every((m) => m.clearedOutputLabel === undefined),
    ).toBe(true);
    const first = cleared[0]!;
    expect(first.content).toContain(first.clearedOutputLabel!);
    expect(first.content).toContain('memory_read');
    expect((await memfold.context('shop')).find((m) => m.id === first.id)!.content).toBe(first.content);

    const tool = memfold.memoryRead('shop');
    const byLabel = await tool.execute({ label: first.clearedOutputLabel });
    expect(byLabel.ok).toBe(true);
    expect(byLabel.output).toContain(appended.find((m) => m.id === first.id)!.content.slice(0, 200));
    const byQuery = await tool.execute({ query: 'SKU-1 stock aisle' });
    expect(byQuery.output).toContain('SKU-1 stock 101 in aisle 1.');

    expect(events.filter((e) => e.type === 'tool_outputs_cleared')).toEqual([
      {
        type: 'tool_outputs_cleared',
        conversationId: 'shop',
        operationId: result.operationId,
        cleared: cleared.length,
        tokensFreed: result.tokensFreedByClearing,
        labels: cleared.map((m) => m.clearedOutputLabel),
      },
    ]);
    expect(events.filter((e) => e.type === 'stage').map((e) => e.type === 'stage' && e.stage)).toEqual(['clear']);
    expect(await memfold.persistence.listOperations('shop')).toMatchObject([
      { kind: 'clear_tool_outputs', status: 'committed', messageIds: cleared.map((m) => m.id) },
    ]);
    await checkInvariants(memfold, 'shop', appended, { toolPairs: true });
    await memfold.close();
  });

  it('never clears the outputs of excluded tools, nor outputs smaller than clearToolOutputMinTokens', async () => {
    // A target clearing alone can reach: tier 2 resolves it, so what it may clear stays live to be seen.
    const { memfold } = await open({
      compaction: { ...settings, contextWindow: 8_000, targetTokens: 3_300, excludeTools: ['ledger'], clearToolOutputMinTokens: 200 },
    });
    const appended = await appendAll(memfold, 'mixed', [...turns(1, 3, { tool: 'ledger' }), ...turns(4, 5, { outputTokens: 150 }), ...turns(6, 9)]);
    const result = await memfold.compact('mixed', { force: true });
    expect(result.tier).toBe(2);
    expect(result.toolOutputsCleared).toBeGreaterThan(0);
    const cleared = (await memfold.history('mixed')).filter((m) => m.clearedOutputLabel !== undefined).map((m) => m.toolCallId);
    expect(cleared.every((id) => Number(id!.slice(5)) >= 6)).toBe(true);
    await checkInvariants(memfold, 'mixed', appended, { toolPairs: true });
    await memfold.close();
  });

  it('plans on the live rows when a history the caller holds predates a clearing: nothing is cleared twice', async () => {
    const { memfold } = await open();
    const appended = await appendAll(memfold, 'held', turns(1, 8));
    const held = await memfold.history('held');
    expect(await memfold.compact('held')).toMatchObject({ status: 'compacted', tier: 2 });
    appended.push(...(await memfold.append('held', turns(9, 12))));
    const stale = [...held, ...appended.slice(held.length)];
    const result = await memfold.compactor.compactHistory(stale, 'held');
    expect(result.status).toBe('compacted');
    expect(result.history.map((m) => m.id)).toEqual((await memfold.context('held')).map((m) => m.id));
    // One tool output entry per cleared message.
    const sources = (await toolOutputs(memfold, 'held')).map((o) => o.sourceIds[0]);
    expect(new Set(sources).size).toBe(sources.length);
    await checkInvariants(memfold, 'held', appended, { toolPairs: true });
    await memfold.close();
  });

  it('says so in usage before compact does it', async () => {
    const { memfold } = await open();
    await appendAll(memfold, 'usage', turns(1, 8));
    expect((await memfold.usage('usage')).next).toBe('clear_tool_outputs');
    expect(await memfold.compact('usage')).toMatchObject({ status: 'compacted', tier: 2 });
    expect((await memfold.usage('usage')).next).toBe('none');
    await memfold.close();
  });

  it('is off with clearToolOutputs: false: the same conversation is summarized, nothing is cleared', async () => {
    const { memfold } = await open({ compaction: { ...settings, clearToolOutputs: false } });
    const appended = await appendAll(memfold, 'off', turns(1, 8));
    const result = await memfold.compact('off');
    expect(result).toMatchObject({ status: 'compacted', tier: 3, toolOutputsCleared: 0, tokensFreedByClearing: 0 });
    expect(result.modelCalls).toBeGreaterThan(0);
    expect(await toolOutputs(memfold, 'off')).toEqual([]);
    await checkInvariants(memfold, 'off', appended, { toolPairs: true });
    await memfold.close();
  });
});

describe('tier 3 after tier 2', () => {
  it('summarizes what clearing leaves above the target; the outputs it folds are archived once, as appended, in its transcript', async () => {
    const { memfold, events } = await open();
    // Long talk around the outputs: clearing alone cannot reach the target.
    const appended = await appendAll(memfold, 'talky', turns(1, 8, { talkTokens: 120, outputTokens: 200 }));
    const result = await memfold.compact('talky');
    expect(result).toMatchObject({ status: 'compacted', tier: 3 });
    expect(result.modelCalls).toBeGreaterThan(0);

    // The outputs tier 2 chose among the folded messages were not cleared first: no entry of their own.
    const transcripts = await memfold.archive.list({ conversationId: 'talky', kind: 'transcript' });
    const folded = transcripts.flatMap((t) => t.messages ?? []).filter((m) => m.role === 'tool');
    expect(folded.length).toBeGreaterThan(0);
    const outputs = await toolOutputs(memfold, 'talky');
    expect(outputs.filter((o) => folded.some((m) => m.id === o.sourceIds[0]))).toEqual([]);
    for (const m of folded) expect(m).toEqual(appended.find((a) => a.id === m.id));
    // The summarizer read a placeholder, not the output.
    const sku = folded[0]!.content.slice(0, 30);
    const depth0 = await memfold.archive.list({ conversationId: 'talky', kind: 'summary' });
    expect(depth0.some((b) => b.content.includes(sku))).toBe(false);
    // Whatever tier 2 cleared is outside the fold, and said so once.
    const cleared = events.filter((e) => e.type === 'tool_outputs_cleared');
    expect(cleared.length).toBe(result.toolOutputsCleared ? 1 : 0);

    // memory_read shows the words once.
    const answer = (await memfold.memoryRead('talky').execute({ query: sku.slice(0, 11) })).output;
    expect(answer).toContain(sku);
    expect(answer.split(sku).length - 1).toBe(1);
    await checkInvariants(memfold, 'talky', appended, { toolPairs: true });
    await memfold.close();
  });

  it('folds outputs an earlier compaction cleared: archived as appended, their entries superseded by the transcript', async () => {
    // First a target clearing alone reaches (tier 2), then the default one, which summarizes.
    const { memfold } = await open({ compaction: { ...settings, contextWindow: 8_000, targetTokens: 3_300 } });
    const appended = await appendAll(memfold, 'later', turns(1, 8, { talkTokens: 120, outputTokens: 200 }));
    const first = await memfold.compact('later', { force: true });
    expect(first).toMatchObject({ status: 'compacted', tier: 2 });
    memfold.configure({ contextWindow: 4_000, targetTokens: 2_000 });
    const result = await memfold.compact('later', { force: true });
    expect(result).toMatchObject({ status: 'compacted', tier: 3 });

    const transcripts = await memfold.archive.list({ conversationId: 'later', kind: 'transcript' });
    const outputs = await toolOutputs(memfold, 'later');
    const archivedOutput = outputs.find((o) => transcripts.some((t) => t.sourceIds.includes(o.sourceIds[0]!)))!;
    expect(archivedOutput).toBeDefined();
    const segment = transcripts.find((t) => t.sourceIds.includes(archivedOutput.sourceIds[0]!))!;
    expect(archivedOutput.parentLabel).toBe(segment.label);
    expect(segment.messages!.find((m) => m.id === archivedOutput.sourceIds[0])).toEqual(archivedOutput.messages![0]);
    expect(archivedOutput.messages![0]).toEqual(appended.find((m) => m.id === archivedOutput.sourceIds[0]));

    // memory_read shows the words once: the superseded tool output is not a second passage.
    const sku = archivedOutput.messages![0]!.content.slice(0, 30);
    const answer = (await memfold.memoryRead('later').execute({ query: sku.slice(0, 11) })).output;
    expect(answer).toContain(sku);
    expect(answer.split(sku).length - 1).toBe(1);
    await checkInvariants(memfold, 'later', appended, { toolPairs: true });
    await memfold.close();
  });

  it('in overlay mode keeps each compacted row as stored, the transcript holding the output as appended', async () => {
    const { memfold } = await open({ compaction: { ...settings, mode: 'overlay' } });
    const appended = await appendAll(memfold, 'overlay', turns(1, 8, { talkTokens: 120, outputTokens: 200 }));
    expect(await memfold.compact('overlay')).toMatchObject({ status: 'compacted', tier: 3 });
    const rows = await memfold.persistence.loadHistory('overlay', { includeCompacted: true });
    const kept = rows.find((m) => m.compactedBy !== undefined && m.role === 'tool')!;
    expect(kept).toEqual(expect.objectContaining({ content: appended.find((m) => m.id === kept.id)!.content }));
    const transcripts = await memfold.archive.list({ conversationId: 'overlay', kind: 'transcript' });
    const copy = transcripts.flatMap((t) => t.messages ?? []).find((m) => m.id === kept.id);
    expect(copy).toEqual(appended.find((m) => m.id === kept.id));
    await checkInvariants(memfold, 'overlay', appended, { toolPairs: true });
    await memfold.close();
  });

  it('keeps every invariant over a long run of appends and compactions', async () => {
    // Small summaries keep the clip-archive small, so that clearing alone can still reach the target between summaries.
    const { memfold } = await open({ compaction: { ...settings, maxSummaryTokens: 100, keepToolUses: 1, targetTokens: 2_400 } });
    const appended = await appendAll(memfold, 'long', []);
    const tiers: Array<number | undefined> = [];
    for (let n = 1; n <= 40; n++) {
      appended.push(...(await memfold.append('long', toolTurn(n, { talkTokens: n % 3 === 0 ? 150 : 10 }))));
      const result = await memfold.compact('long');
      if (result.status === 'compacted') tiers.push(result.tier);
      expect(result.status).not.toBe('failed');
    }
    expect(tiers).toContain(2);
    expect(tiers).toContain(3);
    await checkInvariants(memfold, 'long', appended, { toolPairs: true });
    await memfold.close();
  });
});

/** An in-memory archive whose writes of `kind` entries fail. */
function failingWrites(kind: ArchiveEntry['kind']): Archive {
  const archive = createInMemoryArchive();
  return {
    ...archive,
    async write(entries) {
      if (entries.some((e) => e.kind === kind)) throw new Error(`disk full writing ${kind}`);
      return archive.write(entries);
    },
  };
}

describe('tier failures', () => {
  it('a failed clearing changes nothing: rows whole, no entry left, the operation rolled back', async () => {
    const { memfold } = await open({ archive: failingWrites('tool_output') });
    const appended = await appendAll(memfold, 'fail2', turns(1, 8));
    const result = await memfold.compact('fail2');
    expect(result).toMatchObject({ status: 'failed', failureCode: 'archive_failed', toolOutputsCleared: 0 });
    expect(result.error).toContain('disk full');
    expect(await memfold.history('fail2')).toEqual(appended);
    expect(await memfold.archive.list({ conversationId: 'fail2' })).toEqual([]);
    expect(await memfold.persistence.listOperations('fail2')).toMatchObject([{ kind: 'clear_tool_outputs', status: 'rolled_back' }]);
    await memfold.close();
  });

  it('summarizing that fails after clearing committed: compacted by tier 2, with why tier 3 failed', async () => {
    const { memfold } = await open({ archive: failingWrites('summary') });
    const appended = await appendAll(memfold, 'fail3', turns(1, 8, { talkTokens: 120, outputTokens: 200 }));
    const result = await memfold.compact('fail3');
    expect(result).toMatchObject({ status: 'compacted', tier: 2, failureCode: 'archive_failed', archivedMessages: 0 });
    expect(result.toolOutputsCleared).toBeGreaterThan(0);
    const live = await memfold.history('fail3');
    expect(live.filter((m) => m.clearedOutputLabel !== undefined)).toHaveLength(result.toolOutputsCleared);
    expect(result.history.map((m) => m.id)).toEqual(live.map((m) => m.id));
    // A background job's outcome names the operation that committed (tier 2's), not the rolled-back summarizing one.
    const operations = await memfold.persistence.listOperations('fail3');
    const status = (id: string | undefined) => operations.find((op) => op.id === id)?.status;
    expect(status(result.operationId)).toBe('rolled_back');
    expect(outcomeOf(result, 'fail3', 'job-1', 0).operationId).toBe(result.clearingOperationId);
    expect(status(outcomeOf(result, 'fail3', 'job-1', 0).operationId)).toBe('committed');
    await checkInvariants(memfold, 'fail3', appended, { toolPairs: true });
    await memfold.close();
  });
});

describe('tier settings', () => {
  it('refuses bad values naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ clearToolOutputs: 'yes' }, 'compaction.clearToolOutputs'],
      [{ keepToolUses: -1 }, 'compaction.keepToolUses'],
      [{ keepToolUses: 1.5 }, 'compaction.keepToolUses'],
      [{ excludeTools: 'memory_read' }, 'compaction.excludeTools'],
      [{ excludeTools: ['ok', ''] }, 'compaction.excludeTools[1]'],
      [{ excludeTools: ['ok', 7] }, 'compaction.excludeTools[1]'],
      [{ clearToolOutputMinTokens: 0 }, 'compaction.clearToolOutputMinTokens'],
    ];
    for (const [compaction, field] of cases) {
      const opening = createMemfold({ store: 'memory', env: {}, compaction: compaction as Partial<CompactionSettings> });
      await expect(opening, field).rejects.toBeInstanceOf(InvalidConfigError);
      await expect(opening, field).rejects.toMatchObject({ field });
    }
  });

  it('keeps its own copy of excludeTools', async () => {
    const excludeTools = ['ledger'];
    const { memfold } = await open({ compaction: { ...settings, excludeTools } });
    excludeTools.push('inventory');
    expect(memfold.compactor.settings.excludeTools).toEqual(['ledger']);
    await memfold.close();
  });
});
