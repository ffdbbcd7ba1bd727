/**
 * One plan per compaction (plan/plan-run.ts): the history is planned once before the lock, and every step reads that
 * value. Shown three ways: the plan's time, measured with a clock that ticks once per reading, is one tick (a history
 * changed meanwhile is a new input, planned once in turn); the planner is called from its one place only; and the early
 * fold's requests, sent from the plan, are exactly the ones the compaction's fold then makes, with tier 2 before it, a
 * split turn, or a label tier 2 did not expect.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { toolOutputEntries } from '../../src/compaction/clearing/clear-tool-outputs.js';
import { createCompactor } from '../../src/compaction/compactor.js';
import type { NewMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer, SummarizeRequest } from '../../src/summarizer/summarizer.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';

const at = (minute: number) => new Date(Date.UTC(2024, 4, 2, 9, minute)).toISOString();

/** Turns of a shop assistant that looks orders up: each tool result long enough for tier 2 to clear. */
function orderLookups(turns: number, from = 0): NewMessage[] {
  return Array.from({ length: turns }, (_, i) => {
    const t = from + i;
    const call = { id: `call_${t}`, type: 'function' as const, function: { name: 'get_order', arguments: JSON.stringify({ order_id: `ORD-${700 + t}` }) } };
    const items = Array.from({ length: 6 }, (_, k) => ({ sku: `SKU-${t}-${k}`, name: `item ${k} of order ${700 + t}`, price: 10 + k }));
    return [
      { role: 'user' as const, content: `Where is order ORD-${700 + t}? ${'I need it for the weekend trip. '.repeat(3)}`, createdAt: at(4 * t) },
      { role: 'assistant' as const, content: '', toolCalls: [call], createdAt: at(4 * t + 1) },
      {
        role: 'tool' as const,
        toolCallId: call.id,
        content: JSON.stringify({ order_id: `ORD-${700 + t}`, status: 'shipped', items }),
        createdAt: at(4 * t + 2),
      },
      { role: 'assistant' as const, content: `Order ORD-${700 + t} shipped with DHL; it arrives Friday.`, createdAt: at(4 * t + 3) },
    ];
  }).flat();
}

/** One question the assistant answers with `steps` tool calls in a row: a turn longer than the tail keeps. */
function longTurn(steps: number, from: number): NewMessage[] {
  const messages: NewMessage[] = [{ role: 'user', content: 'Check every order of the spring and list what is late.', createdAt: at(4 * from) }];
  for (let s = 0; s < steps; s++) {
    const call = { id: `step_${s}`, type: 'function' as const, function: { name: 'get_order', arguments: JSON.stringify({ order_id: `ORD-${900 + s}` }) } };
    messages.push(
      { role: 'assistant', content: `Looking at ORD-${900 + s}.`, toolCalls: [call], createdAt: at(4 * from + 1 + s) },
      {
        role: 'tool',
        toolCallId: call.id,
        content: `ORD-${900 + s}: ${'delayed at the depot, new date pending. '.repeat(4)}`,
        createdAt: at(4 * from + 1 + s),
      },
    );
  }
  return messages;
}

/** A model double: the extractive summarizer behind instructions it re-sends (`promptOverhead`), recording requests. */
function modelDouble(stages: readonly string[]): { summarizer: Summarizer; requests: SummarizeRequest[]; stagesAt: string[][] } {
  const extractive = createExtractiveSummarizer();
  const requests: SummarizeRequest[] = [];
  /** The stages under way when each request was made. */
  const stagesAt: string[][] = [];
  const summarizer: Summarizer = {
    ...extractive,
    promptOverhead: () => 'Summarize the transcript. '.repeat(20),
    async summarize(request) {
      requests.push(request);
      stagesAt.push([...stages]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return extractive.summarize(request);
    },
  };
  return { summarizer, requests, stagesAt };
}

/** A clock that moves one tick each time it is read: a stage's time is how many readings it spans, 1 for one measure. */
function tickingClock(): () => number {
  let now = 0;
  return () => ++now;
}

function setup(summarizer: Summarizer = createExtractiveSummarizer(), stages: string[] = []) {
  const persistence = createInMemoryPersistence();
  const archive = createInMemoryArchive({ embedder: createHashingEmbedder() });
  const compactor = createCompactor({
    summarizer,
    archive,
    persistence,
    tokens: createTokenCounter(),
    settings: { contextWindow: 4_000, chunkTokens: 600, keepToolUses: 2 },
    clock: tickingClock(),
    onEvent: (event) => {
      if (event.type === 'stage') stages.push(event.stage);
    },
  });
  return { persistence, archive, compactor };
}

describe('one plan per compaction', () => {
  it('plans a compaction with both tiers once, and a history changed before the lock once more, as a new input', async () => {
    const { persistence, compactor } = setup();
    await persistence.append('orders', orderLookups(40));
    const stale = await persistence.loadHistory('orders');
    const result = await compactor.compactStored('orders', { force: true });
    expect(result).toMatchObject({ status: 'compacted', tier: 3 });
    expect(result.toolOutputsCleared).toBeGreaterThan(0);
    expect(result.stageMs.plan).toBe(1);

    await persistence.append('orders', orderLookups(30, 40));
    // The caller's copy predates the first compaction: planned, then the live rows planned in its place.
    const again = await compactor.compactHistory(stale, 'orders', { force: true });
    expect(again.status, again.error).toBe('compacted');
    expect(again.stageMs.plan).toBe(1);
  });

  it('is made by the planner from its one place: no step plans again', () => {
    const root = path.resolve(import.meta.dirname, '../../src');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const callers = (name: string) =>
      files
        .filter((f) => new RegExp(`(?<![\\w.])${name}\\(`).test(readFileSync(path.join(root, f), 'utf8').replace(/export (async )?function \w+\(/g, '')))
        .map((f) => f.split(path.sep).join('/'))
        .sort();
    expect(callers('planCompaction')).toEqual(['compaction/plan/plan-tiers.ts']);
    // usage() plans to say what would run next; it runs nothing.
    expect(callers('planTiers')).toEqual(['compaction/plan/plan-run.ts', 'compaction/usage/context-usage.ts']);
    expect(callers('planRun')).toEqual(['compaction/prepare-compaction.ts']);
    expect(callers('chunkCompactable')).toEqual(['compaction/plan/plan-run.ts']);
    // What the tier planner exports, each file takes by value: no step holds a way to plan again.
    const valueImports = files.flatMap((f) =>
      [...readFileSync(path.join(root, f), 'utf8').matchAll(/import \{([^}]*)\} from '[./]*(?:plan\/)?plan-tiers\.js'/g)].map((m) => {
        const names = m[1]!
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n !== '' && !n.startsWith('type '));
        return `${f.split(path.sep).join('/')}: ${names.join(', ')}`;
      }),
    );
    expect(valueImports.sort()).toEqual([
      'compaction/plan/plan-run.ts: planTiers',
      'compaction/run-tiers.ts: withRows',
      'compaction/usage/context-usage.ts: planTiers',
    ]);
  });
});

describe("the early fold's requests are the fold's", () => {
  const cases: {
    name: string;
    messages: NewMessage[];
    takeLabels?: boolean;
    expect: (r: { toolOutputsCleared?: number; turnPrefixMessages: number }) => void;
  }[] = [
    {
      name: 'tier 3 alone',
      messages: orderLookups(40).filter((m) => m.role !== 'tool' && !m.toolCalls),
      expect: (r) => expect(r.toolOutputsCleared ?? 0).toBe(0),
    },
    { name: 'tier 2, then tier 3', messages: orderLookups(40), expect: (r) => expect(r.toolOutputsCleared).toBeGreaterThan(0) },
    { name: 'a split turn', messages: [...orderLookups(20), ...longTurn(30, 20)], expect: (r) => expect(r.turnPrefixMessages).toBeGreaterThan(0) },
    {
      name: 'labels tier 2 finds taken',
      messages: orderLookups(40),
      takeLabels: true,
      expect: (r) => expect(r.toolOutputsCleared).toBeGreaterThan(0),
    },
  ];
  for (const c of cases) {
    it(`with ${c.name}: every fold request was sent early, none twice, none wasted`, async () => {
      const stages: string[] = [];
      const { summarizer, requests, stagesAt } = modelDouble(stages);
      const { persistence, archive, compactor } = setup(summarizer, stages);
      const appended = await persistence.append('orders', c.messages);
      if (c.takeLabels) {
        // Every label a clearing would choose is already held: tier 2 clears under others than the plan expected.
        const outputs = appended.filter((m) => m.role === 'tool');
        const entries = toolOutputEntries(outputs, { conversationId: 'orders', operationId: 'elsewhere' });
        await archive.write(entries.map((e) => ({ ...e, sourceIds: [`gone-${e.sourceIds[0]}`], messages: [] })));
      }
      const result = await compactor.compactStored('orders', { force: true });
      expect(result.status, result.error).toBe('compacted');
      expect(result.tier).toBe(3);
      c.expect(result);
      const folds = requests.filter((r) => r.purpose === 'fold');
      expect(folds.length).toBeGreaterThan(1);
      // The first went out before the compaction's own fold started: the early fold sent it.
      expect(stagesAt[0]).not.toContain('fold');
      // Each request the model saw was one the compaction used: the early fold sent nothing it did not take.
      expect(requests.length).toBe(result.modelCalls);
      expect(folds.length).toBe(result.batches.filter((b) => b.depth === 0).length);
    });
  }
});
