/**
 * Which tier resolves a compaction (plan-tiers.ts) and which tool outputs tier 2 clears (clear-tool-outputs.ts):
 * pure, on built histories counted as chars/4.
 */
import { describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { clearedPlaceholder, selectToolOutputsToClear, toolOutputEntries } from '../../src/compaction/clearing/clear-tool-outputs.js';
import { resolveCompactionSettings, type CompactionSettings } from '../../src/compaction/compaction-settings.js';
import { parseLabel } from '../../src/compaction/format/labels.js';
import { planCompaction } from '../../src/compaction/plan/plan.js';
import { planTiers } from '../../src/compaction/plan/plan-tiers.js';
import { chars4, msg, toolCall } from '../support/messages.js';

/** A turn: a short question, `calls` tool calls of `tool` in one message, each answered by `outputTokens` of output, and a short answer. */
function turn(n: number, options: { outputTokens?: number; tool?: string; calls?: number; talkTokens?: number } = {}): ConversationMessage[] {
  const { outputTokens = 300, tool = 'lookup', calls = 1, talkTokens = 10 } = options;
  const ids = Array.from({ length: calls }, (_, k) => `call_${n}_${k}`);
  return [
    msg('user', `question ${n} ${'q'.repeat(talkTokens * 4)}`),
    msg('assistant', '', { toolCalls: ids.map((id) => toolCall(id, tool)) }),
    ...ids.map((id) => msg('tool', `result of ${id} ${'r'.repeat(outputTokens * 4)}`, { toolCallId: id, name: tool })),
    msg('assistant', `answer ${n} ${'a'.repeat(talkTokens * 4)}`),
  ];
}

const total = (history: readonly ConversationMessage[]) => history.reduce((sum, m) => sum + chars4(m), 0);
const base = (over: Partial<CompactionSettings> = {}) =>
  resolveCompactionSettings({ contextWindow: 4_000, keepRecentTokens: 400, keepRecentMessages: 4, keepToolUses: 1, ...over });

describe('selectToolOutputsToClear', () => {
  const history = [msg('system', 'You are terse.'), ...turn(1), ...turn(2), ...turn(3), ...turn(4)];
  const all = { tokensBefore: total(history), stopAt: 0 };

  it('clears every output older than the last keepToolUses calls, oldest first, and keeps the rest', () => {
    const cleared = selectToolOutputsToClear(history, base({ keepToolUses: 1 }), chars4, all).outputs.map((o) => o.message.toolCallId);
    expect(cleared).toEqual(['call_1_0', 'call_2_0', 'call_3_0']);
    expect(selectToolOutputsToClear(history, base({ keepToolUses: 3 }), chars4, all).outputs.map((o) => o.message.toolCallId)).toEqual(['call_1_0']);
    expect(selectToolOutputsToClear(history, base({ keepToolUses: 4 }), chars4, all).outputs).toEqual([]);
    expect(selectToolOutputsToClear(history, base({ keepToolUses: 0 }), chars4, all).outputs).toHaveLength(4);
  });

  it('counts tool uses as calls: parallel calls in one message are several uses', () => {
    const parallel = [...turn(1), ...turn(2, { calls: 3 })];
    const cleared = selectToolOutputsToClear(parallel, base({ keepToolUses: 2 }), chars4, { tokensBefore: total(parallel), stopAt: 0 });
    expect(cleared.outputs.map((o) => o.message.toolCallId)).toEqual(['call_1_0', 'call_2_0']);
  });

  it('stops once the history is at or under the mark, and estimates what each clearing frees', () => {
    const before = total(history);
    const selection = selectToolOutputsToClear(history, base(), chars4, { tokensBefore: before, stopAt: before - 1 });
    expect(selection.outputs).toHaveLength(1);
    const [first] = selection.outputs;
    const placeholder = { ...first!.message, content: clearedPlaceholder('o-2024-01-01T00:03-abcdef', first!.tokens) };
    expect(selection.freed).toBe(first!.tokens - chars4(placeholder));
  });

  it('leaves excluded tools, small outputs, cleared outputs and results of unknown calls alone, and does nothing when off', () => {
    const mixed = [...turn(1, { tool: 'memory_read' }), ...turn(2, { outputTokens: 20 }), ...turn(3), ...turn(4)];
    const settings = base({ excludeTools: ['memory_read'], clearToolOutputMinTokens: 100 });
    const select = (h: ConversationMessage[], s = settings) => selectToolOutputsToClear(h, s, chars4, { tokensBefore: total(h), stopAt: 0 });
    expect(select(mixed).outputs.map((o) => o.message.toolCallId)).toEqual(['call_3_0']);
    const cleared = mixed.map((m) => (m.toolCallId === 'call_3_0' ? { ...m, clearedOutputLabel: 'o-x', content: 'placeholder' } : m));
    expect(select(cleared).outputs).toEqual([]);
    const orphan = [msg('user', 'hi'), msg('tool', 'x'.repeat(2_000), { toolCallId: 'nobody' }), ...turn(5), ...turn(6)];
    expect(select(orphan).outputs.map((o) => o.message.toolCallId)).toEqual(['call_5_0']);
    expect(select(mixed, { ...settings, clearToolOutputs: false }).outputs).toEqual([]);
  });

  it('archives each output whole under an o- label, free of the labels taken', () => {
    const output = history.find((m) => m.role === 'tool')!;
    const [entry] = toolOutputEntries([output], { conversationId: 'c1', operationId: 'op' });
    expect(entry).toMatchObject({ kind: 'tool_output', depth: 0, count: 1, sourceIds: [output.id], operationId: 'op', messages: [output] });
    expect(parseLabel(entry!.label)).toMatchObject({ kind: 'tool_output', time: output.createdAt.slice(0, 16) });
    const [again] = toolOutputEntries([output], { conversationId: 'c1', operationId: 'op2' }, new Set([entry!.label]));
    expect(again!.label).not.toBe(entry!.label);
    expect(again!.label.startsWith(entry!.label)).toBe(true);
  });
});

describe('planTiers', () => {
  it('skips below the trigger unless forced; forced above the target, it clears', () => {
    const history = Array.from({ length: 5 }, (_, i) => turn(i + 1)).flat();
    const settings = base();
    expect(total(history)).toBeGreaterThan(settings.targetTokens);
    expect(planTiers(history, settings, chars4)).toMatchObject({ kind: 'skip', reason: 'below_trigger' });
    expect(planTiers(history, settings, chars4, { force: true }).kind).toBe('clear');
  });

  it('tier 2 alone when clearing brings the history to the target, oldest first and no further', () => {
    const history = [msg('system', 'You are terse.'), ...Array.from({ length: 8 }, (_, i) => turn(i + 1, { outputTokens: 500 })).flat()];
    const settings = base({ targetTokens: 2_500 });
    expect(total(history)).toBeGreaterThanOrEqual(settings.trigger);
    const plan = planTiers(history, settings, chars4);
    expect(plan.kind).toBe('clear');
    if (plan.kind !== 'clear') return;
    expect(total(history) - plan.clearing.freed).toBeLessThanOrEqual(settings.targetTokens);
    expect(total(history) - plan.clearing.freed + plan.clearing.outputs.at(-1)!.freed).toBeGreaterThan(settings.targetTokens);
    expect(plan.clearing.outputs.map((o) => o.message.toolCallId)).toEqual(['call_1_0', 'call_2_0', 'call_3_0', 'call_4_0', 'call_5_0']);
  });

  it('tier 3 on the cleared history when clearing is not enough and summarizing frees at least minFreedTokens', () => {
    const history = Array.from({ length: 12 }, (_, i) => turn(i + 1, { outputTokens: 120, talkTokens: 120 })).flat();
    const plan = planTiers(history, base(), chars4);
    expect(plan.kind).toBe('compact');
    if (plan.kind !== 'compact') return;
    expect(plan.clearing.outputs.length).toBe(11);
    // The tail is planned on the placeholders: it keeps more messages than on the whole outputs.
    const whole = planCompaction(history, base(), chars4);
    expect(whole.kind).toBe('compact');
    if (whole.kind === 'compact') expect(plan.plan.recent.length).toBeGreaterThanOrEqual(whole.recent.length);
  });

  it('tier 2 alone when summarizing after it would free less than minFreedTokens; too_little_to_free when both would', () => {
    // A long opening turn that stays verbatim, then tool turns: little lies between the kept head and tail to summarize.
    const history = [
      msg('system', 's'.repeat(4 * 1_300)),
      ...turn(1, { outputTokens: 600 }),
      ...turn(2, { outputTokens: 600 }),
      ...turn(3, { outputTokens: 600 }),
    ];
    const settings = base({ keepRecentMessages: 8, minFreedTokens: 400, targetTokens: 1_000, keepFirstTurns: 0 });
    expect(total(history)).toBeGreaterThanOrEqual(settings.trigger);
    const plan = planTiers(history, settings, chars4);
    expect(plan.kind).toBe('clear');
    if (plan.kind === 'clear') expect(total(history) - plan.clearing.freed).toBeGreaterThan(settings.targetTokens);
    expect(planTiers(history, { ...settings, minFreedTokens: 1_400 }, chars4)).toMatchObject({ kind: 'skip', reason: 'too_little_to_free' });
    // Forced, the same step runs.
    expect(planTiers(history, { ...settings, minFreedTokens: 1_400 }, chars4, { force: true }).kind).toBe('clear');
  });

  it('is planCompaction itself when tier 2 is off or finds nothing to clear', () => {
    const history = Array.from({ length: 12 }, (_, i) => turn(i + 1, { outputTokens: 120, talkTokens: 120 })).flat();
    const off = base({ clearToolOutputs: false });
    expect(planTiers(history, off, chars4)).toMatchObject({ kind: 'compact', plan: planCompaction(history, off, chars4), clearing: { outputs: [] } });
    const talk = Array.from({ length: 12 }, (_, i) => [msg('user', `q${i} ${'q'.repeat(1_200)}`), msg('assistant', `a${i} ${'a'.repeat(1_200)}`)]).flat();
    expect(planTiers(talk, base(), chars4)).toMatchObject({ kind: 'compact', plan: planCompaction(talk, base(), chars4) });
  });
});
