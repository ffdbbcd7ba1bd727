/**
 * The compact tool through createMemfold (in memory, the offline summarizer): its three answers (no compaction
 * needed, refused too soon, compacted with what it did), its arguments refused naming them, and its definition.
 */
import { describe, expect, it } from 'vitest';
import { createMemfold } from '../../src/memfold.js';
import type { SummaryBatch } from '../../src/conversation/types.js';
import { compactionSummaryText, MAX_COMPACT_SUMMARY_CHARS } from '../../src/tools/compact-summary.js';
import { COMPACT_DEFINITION, parseCompactArgs } from '../../src/tools/compact-tool.js';
import { orderChat } from '../support/messages.js';

async function open() {
  return createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 2_000 } });
}

describe('compact tool', () => {
  it('answers "No compaction needed" at or under the floor, and compacts nothing', async () => {
    const memfold = await open();
    await memfold.append('c', orderChat(2));
    const before = await memfold.history('c');
    const answer = await memfold.compactTool('c').execute({});
    expect(answer.ok).toBe(true);
    expect(answer.output).toMatch(/^No compaction needed: the context holds [\d,]+ tokens, at or under [\d,]+\. Continue the task\.$/);
    expect(await memfold.history('c')).toEqual(before);
    await memfold.close();
  });

  it('compacts above the floor and says what it did, with the focus; then refuses until enough is added', async () => {
    const memfold = await open();
    await memfold.append('c', orderChat(12));
    const tool = memfold.compactTool('c');
    const usage = await memfold.usage('c');
    expect(usage.tokens).toBeGreaterThan(usage.targetTokens);
    expect(usage.tokens).toBeLessThan(usage.trigger); // under the trigger: the tool's compaction is forced

    const done = await tool.execute(JSON.stringify({ focus: 'the refund of ORD-503' }));
    expect(done.ok).toBe(true);
    expect(done.output).toMatch(/^Compacted: summarized \d+ older messages into \d+ batch(es)?; the context went from [\d,]+ to [\d,]+ tokens\./);
    expect(done.output).toContain('The summary was asked to keep: the refund of ORD-503.');
    expect(done.output).toContain('memory_read');
    const batches = await memfold.archive.list({ conversationId: 'c', kind: 'summary' });
    expect(batches.length).toBeGreaterThan(0);
    // The answer carries the summary it wrote: each new depth-0 batch, header line included.
    const [, summary] = done.output.split('\n\nThe summary written:\n');
    expect(summary).toBe(batches.map((batch) => batch.content.trim()).join('\n\n'));
    expect(summary).toMatch(/^\[depth:0\|/);

    // Refused while fewer than minNewTokens were added since; the floor is lowered so it is not what answers.
    const strict = memfold.compactTool('c', { floorTokens: 0, minNewTokens: 5_000 });
    const refused = await strict.execute({});
    expect(refused).toMatchObject({ ok: false, error: 'too_soon' });
    expect(refused.output).toMatch(/^Refused: [\d,]+ tokens were added since the last compaction; another compaction needs at least 5,000 new tokens\./);
    // A tool with no minimum compacts again.
    const again = await memfold.compactTool('c', { floorTokens: 0, minNewTokens: 0 }).execute({});
    expect(again.output).toMatch(/^(Compacted|No compaction): /);
    await memfold.close();
  });

  it('refuses bad arguments naming them, and bad limits when created', async () => {
    const memfold = await open();
    await memfold.append('c', orderChat(2));
    const tool = memfold.compactTool('c');
    expect(await tool.execute({ focus: 'x'.repeat(401) })).toMatchObject({ ok: false, error: 'Invalid argument focus: must be at most 400 characters' });
    expect((await tool.execute({ query: 'x' })).error).toContain('query: is not an argument of compact (known: focus)');
    expect((await tool.execute('{not json')).error).toContain('arguments: must be a JSON object');
    expect(parseCompactArgs({ focus: null })).toEqual({});
    expect(() => memfold.compactTool('c', { minNewTokens: -1 })).toThrow(/minNewTokens: must be an integer >= 0/);
    expect(() => memfold.compactTool('')).toThrow(/conversationId/);
    await memfold.close();
  });

  it('has a definition whose parameters come from the argument schema', () => {
    expect(COMPACT_DEFINITION.function.name).toBe('compact');
    expect(COMPACT_DEFINITION.function.parameters).toMatchObject({
      type: 'object',
      properties: { focus: { type: 'string', maxLength: 400 } },
      additionalProperties: false,
    });
  });

  it('bounds the summary it shows: the newest batches whole, one cut at the bound, the older ones named', () => {
    const batch = (i: number, chars: number): SummaryBatch => ({
      kind: 'summary',
      label: `c-0-${i}`,
      conversationId: 'c',
      depth: 0,
      start: '2025-01-01T00:00:00.000Z',
      end: '2025-01-01T00:00:00.000Z',
      count: 1,
      content: `[depth:0|batch ${i}] ${'x'.repeat(chars)}`,
      sourceIds: [],
      operationId: 'op',
    });
    const batches = [0, 1, 2, 3, 4, 5].map((i) => batch(i, 1_500));
    const text = compactionSummaryText(batches);
    expect(text.length).toBeLessThanOrEqual(MAX_COMPACT_SUMMARY_CHARS + 200);
    expect(text).toMatch(/^\(3 earlier batches not shown: c-0-0 to c-0-2\)/);
    expect(text).toContain('[depth:0|batch 3] x');
    expect(text).toContain('… (cut; memory_read with label c-0-3 reads it whole)');
    expect(text).toContain(batches[4]!.content);
    expect(text.endsWith(batches[5]!.content)).toBe(true);
    expect(compactionSummaryText([batch(0, 10)])).toBe(`[depth:0|batch 0] ${'x'.repeat(10)}`);
  });
});
