/**
 * Pinned messages in the planner (plan.ts, plan-tiers.ts, clear-tool-outputs.ts), pure: a pinned unit between the
 * first turns and the tail stays live in its place (`plan.pinned`), never compactable, never cleared, and what the
 * plan expects to free leaves it out; a pinned call keeps its results and a pinned result its call. And the last
 * turn's assistant question or pending tool call is never compactable, whatever the tail's settings.
 */
import { describe, expect, it } from 'vitest';
import { selectToolOutputsToClear } from '../../src/compaction/clearing/clear-tool-outputs.js';
import { resolveCompactionSettings, type CompactionSettings } from '../../src/compaction/compaction-settings.js';
import { planCompaction } from '../../src/compaction/plan/plan.js';
import { planTiers } from '../../src/compaction/plan/plan-tiers.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { chars4, msg, toolCall } from '../support/messages.js';

const words = (label: string, tokens: number) => `${label} ${'w'.repeat(tokens * 4)}`;

function talk(n: number, tokens = 100): ConversationMessage[] {
  return [msg('user', words(`question ${n}`, tokens)), msg('assistant', words(`answer ${n}`, tokens))];
}

function toolTurn(n: number, options: { pin?: 'call' | 'result' } = {}): ConversationMessage[] {
  const id = `call_${n}`;
  return [
    msg('user', words(`question ${n}`, 20)),
    msg('assistant', '', { toolCalls: [toolCall(id)], ...(options.pin === 'call' ? { pinned: true as const } : {}) }),
    msg('tool', words(`result ${n}`, 300), { toolCallId: id, name: 'lookup', ...(options.pin === 'result' ? { pinned: true as const } : {}) }),
    msg('assistant', words(`answer ${n}`, 20)),
  ];
}

const settings = (over: Partial<CompactionSettings> = {}) =>
  resolveCompactionSettings({ contextWindow: 4_000, keepRecentTokens: 300, keepRecentMessages: 2, keepFirstTurns: 1, ...over });
const ids = (messages: readonly ConversationMessage[]) => messages.map((m) => m.id);

describe('a pinned message in the plan', () => {
  it('is left out of the compactable messages and kept in its place, and what the plan frees leaves it out', () => {
    const head = [msg('system', 'You are terse.'), ...talk(1), ...talk(2)];
    const pinned = msg('user', words('keep this: the deploy key rotates on Fridays', 150), { pinned: true });
    const history = [...head, pinned, ...talk(3), ...talk(4), ...talk(5), ...talk(6)];
    const unpinned = history.map((m) => (m === pinned ? { ...m, pinned: undefined } : m)) as ConversationMessage[];
    const plan = planCompaction(history, settings(), chars4, { force: true });
    const before = planCompaction(unpinned, settings(), chars4, { force: true });
    if (plan.kind !== 'compact' || before.kind !== 'compact') throw new Error('expected plans');
    expect(ids(plan.pinned)).toEqual([pinned.id]);
    expect(ids(plan.compactable)).not.toContain(pinned.id);
    expect(ids(before.compactable)).toContain(pinned.id);
    expect(plan.expectedFreed).toBe(before.expectedFreed - chars4(pinned));
    // First turns, pinned and tail in seq order: the live history after the commit.
    const kept = [...plan.firstTurns, ...plan.pinned, ...plan.recent].map((m) => m.seq);
    expect(kept).toEqual([...kept].sort((a, b) => a - b));
  });

  it('keeps its whole unit: a pinned call keeps its result, a pinned result its call', () => {
    for (const pin of ['call', 'result'] as const) {
      const pinnedTurn = toolTurn(2, { pin });
      const history = [msg('system', 'You are terse.'), ...talk(1), ...pinnedTurn, ...talk(3), ...talk(4), ...talk(5), ...talk(6)];
      const plan = planCompaction(history, settings(), chars4, { force: true });
      if (plan.kind !== 'compact') throw new Error('expected a plan');
      expect(ids(plan.pinned), pin).toEqual([pinnedTurn[1]!.id, pinnedTurn[2]!.id]);
      expect(ids(plan.compactable), pin).toContain(pinnedTurn[0]!.id);
      expect(ids(plan.compactable), pin).not.toContain(pinnedTurn[2]!.id);
    }
  });

  it('skips as nothing_to_compact when every message before the tail is pinned', () => {
    const pin = (messages: ConversationMessage[]) => messages.map((m) => ({ ...m, pinned: true as const }));
    const history = [msg('system', 'You are terse.'), ...talk(1), ...pin([...talk(2), ...talk(3), ...talk(4), ...talk(5)]), ...talk(6)];
    expect(planCompaction(history, settings(), chars4, { force: true })).toMatchObject({ kind: 'skip', reason: 'nothing_to_compact' });
  });

  it('is never cleared by tier 2, nor its call, while the outputs around it are', () => {
    for (const pin of ['call', 'result'] as const) {
      const pinnedTurn = toolTurn(2, { pin });
      const history = [msg('system', 'You are terse.'), ...toolTurn(1), ...pinnedTurn, ...toolTurn(3), ...toolTurn(4), ...toolTurn(5)];
      const s = settings({ keepToolUses: 1, clearToolOutputMinTokens: 20 });
      const selected = selectToolOutputsToClear(history, s, chars4, { tokensBefore: 100_000, stopAt: 0 }).outputs.map((o) => o.message.toolCallId);
      expect(selected, pin).toEqual(['call_1', 'call_3', 'call_4']);
      const tiers = planTiers(history, s, chars4, { force: true });
      if (tiers.kind === 'skip') throw new Error('expected a tier plan');
      expect(tiers.clearing.outputs.map((o) => o.message.id)).not.toContain(pinnedTurn[2]!.id);
      if (tiers.kind === 'compact') expect(ids(tiers.plan.compactable)).not.toContain(pinnedTurn[2]!.id);
    }
  });
});

describe('the last turn awaiting the user or a tool result', () => {
  const endings: Record<string, () => ConversationMessage[]> = {
    'an assistant question': () => [msg('user', words('deploy it', 30)), msg('assistant', 'Staging or production?')],
    'a question after a tool result': () => [
      msg('user', words('deploy it', 30)),
      msg('assistant', '', { toolCalls: [toolCall('call_env')] }),
      msg('tool', words('two environments', 200), { toolCallId: 'call_env' }),
      msg('assistant', 'Staging or production?'),
    ],
    'a pending tool call': () => [msg('user', words('deploy it', 30)), msg('assistant', '', { toolCalls: [toolCall('call_deploy')] })],
    'a call with one of two results': () => [
      msg('user', words('deploy it', 30)),
      msg('assistant', '', { toolCalls: [toolCall('call_a'), toolCall('call_b')] }),
      msg('tool', words('a done', 200), { toolCallId: 'call_a' }),
    ],
  };
  const tails = [
    { keepRecentTokens: 0, keepRecentMessages: 0 },
    { keepRecentTokens: 1, keepRecentMessages: 0 },
    { keepRecentTokens: 0, keepRecentMessages: 1 },
    { keepRecentTokens: 50, keepRecentMessages: 0, sessionScope: 'tokenBudget' as const },
  ];

  it('stays live with the tail: never compacted, however small the tail settings', () => {
    for (const [name, ending] of Object.entries(endings)) {
      for (const tail of tails) {
        const last = ending();
        const history = [msg('system', 'You are terse.'), ...talk(1), ...talk(2), ...talk(3), ...last];
        const tiers = planTiers(history, settings({ keepFirstTurns: 0, ...tail }), chars4, { force: true });
        if (tiers.kind !== 'compact') throw new Error(`${name}: expected tier 3`);
        const where = `${name} ${JSON.stringify(tail)}`;
        // The last unit (the question, or the call with what results came) is in the tail, whole.
        const lastUnit = last.slice(last.findLastIndex((m) => m.role === 'assistant' && (m.toolCalls !== undefined || m === last.at(-1))));
        expect(ids(tiers.plan.recent).slice(-lastUnit.length), where).toEqual(ids(lastUnit));
        expect(ids(tiers.plan.compactable), where).not.toContain(last.at(-1)!.id);
      }
    }
  });
});
