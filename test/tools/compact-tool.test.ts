/**
 * The compact tool through createMemfold (in memory, the offline summarizer): its three answers (no compaction
 * needed, refused too soon, compacted with what it did), its arguments refused naming them, and its definition.
 */
import { describe, expect, it } from 'vitest';
import { createMemfold } from '../../src/memfold.js';
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
    expect((await memfold.archive.list({ conversationId: 'c', kind: 'summary' })).length).toBeGreaterThan(0);

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
});
