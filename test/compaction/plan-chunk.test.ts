import { describe, expect, it } from 'vitest';
import { resolveCompactionSettings } from '../../src/compaction/compaction-settings.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { chunkByTokens } from '../../src/compaction/fold/chunk.js';
import { chunkStretchBudget, summarizerInputBudget } from '../../src/compaction/fold/summarizer-budget.js';
import { buildTranscriptSegments } from '../../src/compaction/batches/transcript-segments.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { clipArchiveBound, planCompaction } from '../../src/compaction/plan/plan.js';
import { turnStarts, unitStarts } from '../../src/conversation/turns.js';
import { chars4, msg, toolCall, toolTurn } from '../support/messages.js';

const settings = resolveCompactionSettings({ contextWindow: 2_000, keepRecentTokens: 300, keepRecentMessages: 4, chunkTokens: 200 });

describe('units and turns', () => {
  it('keep an assistant tool call with every result that answers it', () => {
    const messages = [
      msg('user', 'q'),
      msg('assistant', '', { toolCalls: [toolCall('a'), toolCall('b')] }),
      msg('tool', 'ra', { toolCallId: 'a' }),
      msg('tool', 'rb', { toolCallId: 'b' }),
      msg('assistant', 'done'),
      msg('user', 'next'),
    ];
    expect(unitStarts(messages)).toEqual([0, 1, 4, 5]);
    expect(turnStarts(messages)).toEqual([0, 5]);
  });
});

describe('planCompaction', () => {
  const history = [msg('system', 'You are helpful.'), ...Array.from({ length: 12 }, (_, n) => toolTurn(n)).flat()];

  it('skips below the trigger unless forced', () => {
    const short = history.slice(0, 5);
    expect(planCompaction(short, settings, chars4)).toMatchObject({ kind: 'skip', reason: 'below_trigger' });
    expect(planCompaction(short, settings, chars4, { force: true })).toMatchObject({ kind: 'skip', reason: 'nothing_to_compact' });
    expect(planCompaction(history, settings, chars4, { force: true }).kind).toBe('compact');
  });

  it('keeps the system prompt, the first turn and a recent tail cut at a turn boundary', () => {
    const plan = planCompaction(history, settings, chars4, { force: true });
    if (plan.kind !== 'compact') throw new Error(`expected a plan, got ${plan.reason}`);
    expect(plan.system.map((m) => m.role)).toEqual(['system']);
    expect(plan.firstTurns).toEqual(history.slice(1, 5));
    expect(plan.recent[0]!.role).toBe('user');
    expect(plan.recent.length).toBeGreaterThanOrEqual(settings.keepRecentMessages);
    const tailTokens = plan.recent.reduce((s, m) => s + chars4(m), 0);
    expect(tailTokens).toBeLessThanOrEqual(settings.keepRecentTokens);
    // Every message is in exactly one part, in order.
    expect([...plan.system, ...plan.firstTurns, ...plan.compactable, ...plan.recent]).toEqual(history);
  });

  it('never separates a tool call from its result, even inside one long agent turn', () => {
    const agentTurn = [msg('user', 'fix the bug')];
    for (let n = 0; n < 30; n++) {
      agentTurn.push(msg('assistant', '', { toolCalls: [toolCall(`t${n}`)] }), msg('tool', 'output line\n'.repeat(10), { toolCallId: `t${n}` }));
    }
    const plan = planCompaction([msg('user', 'hello'), msg('assistant', 'hi'), ...agentTurn], settings, chars4, { force: true });
    if (plan.kind !== 'compact') throw new Error('expected a plan');
    const archivedCalls = new Set(plan.compactable.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)));
    const archivedResults = new Set(plan.compactable.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
    expect(archivedCalls.size).toBeGreaterThan(0);
    expect([...archivedCalls].sort()).toEqual([...archivedResults].sort());
    expect(plan.recent[0]!.role).not.toBe('tool');
  });

  it('replaces a previous clip-archive instead of compacting it', () => {
    const clip = msg('system', '[Context Summary: 1 archived batches]', { kind: 'clip_archive', seq: 0 });
    const plan = planCompaction([history[0]!, clip, ...history.slice(1)], settings, chars4, { force: true });
    if (plan.kind !== 'compact') throw new Error('expected a plan');
    expect(plan.previousClipArchive).toBe(clip);
    expect(plan.compactable).not.toContain(clip);
  });

  it('cuts the tail so that the history comes down to the target, the clip-archive counted at its largest', () => {
    // A long dialogue: 40 turns of about 60 tokens a message, well past a 4,000-token window's trigger.
    const dialogueTurns = Array.from({ length: 40 }, (_, n) => [msg('user', `question ${n} `.repeat(20)), msg('assistant', `answer ${n} `.repeat(20))]).flat();
    const long = [msg('system', 'You are helpful.'), ...dialogueTurns];
    const wide = resolveCompactionSettings({ contextWindow: 4_000, keepRecentMessages: 2 });
    const tokensOf = (messages: typeof long) => messages.reduce((s, m) => s + chars4(m), 0);
    for (const targetTokens of [1_800, 2_400]) {
      const plan = planCompaction(long, { ...wide, targetTokens }, chars4);
      if (plan.kind !== 'compact') throw new Error(`expected a plan, got ${plan.reason}`);
      const kept = tokensOf([...plan.system, ...plan.firstTurns, ...plan.recent]);
      expect(kept + clipArchiveBound(wide)).toBeLessThanOrEqual(targetTokens);
      // No more than one turn under it: the tail is as long as the target allows.
      expect(kept + clipArchiveBound(wide) + 2 * 70).toBeGreaterThan(targetTokens);
      expect(plan.expectedFreed).toBe(tokensOf(plan.compactable) - Math.min(clipArchiveBound(wide), wide.maxSummaryTokens));
    }
  });

  it('does nothing when a compaction would free less than minFreedTokens, unless forced or at the window', () => {
    const small = resolveCompactionSettings({ contextWindow: 4_000, keepRecentMessages: 2 });
    const turns = Array.from({ length: 6 }, (_, k) => [msg('user', `q ${k} `.repeat(30)), msg('assistant', `a ${k} `.repeat(30))]).flat();
    // Past the trigger because of one huge recent message: the tail keeps it, and little lies between head and tail.
    const withHuge = (words: number) => [...turns, msg('user', 'pasted log line '.repeat(words)), msg('assistant', 'looking')];
    const tokensOf = (messages: ReturnType<typeof withHuge>) => messages.reduce((s, m) => s + chars4(m), 0);
    const history = withHuge(700);
    expect(tokensOf(history)).toBeGreaterThanOrEqual(small.trigger);
    expect(tokensOf(history)).toBeLessThan(small.contextWindow);
    expect(planCompaction(history, small, chars4)).toMatchObject({ kind: 'skip', reason: 'too_little_to_free' });
    const forced = planCompaction(history, small, chars4, { force: true });
    if (forced.kind !== 'compact') throw new Error('expected a forced plan');
    expect(forced.expectedFreed).toBeLessThan(small.minFreedTokens);
    // At the window itself any step is taken.
    const full = withHuge(900);
    expect(tokensOf(full)).toBeGreaterThanOrEqual(small.contextWindow);
    expect(planCompaction(full, small, chars4).kind).toBe('compact');
  });

  it('says when there is nothing between the kept head and tail', () => {
    const tiny = [msg('user', 'a'), msg('assistant', 'b')];
    expect(planCompaction(tiny, settings, chars4, { force: true })).toMatchObject({ kind: 'skip', reason: 'nothing_to_compact' });
  });
});

describe('chunkByTokens', () => {
  it('fills chunks in order within the budget and never splits a unit', () => {
    const messages = Array.from({ length: 10 }, (_, n) => toolTurn(n)).flat();
    const chunks = chunkByTokens(messages, 120, chars4);
    expect(chunks.flat()).toEqual(messages);
    for (const chunk of chunks) {
      const calls = chunk.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id));
      const results = chunk.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
      expect(calls).toEqual(results);
      const tokens = chunk.reduce((s, m) => s + chars4(m), 0);
      if (chunk.length > 1) expect(tokens).toBeLessThanOrEqual(120);
    }
  });

  it('puts a unit larger than the budget in a chunk of its own', () => {
    const big = msg('user', 'x'.repeat(4_000));
    const chunks = chunkByTokens([msg('user', 'a'), big, msg('user', 'b')], 100, chars4);
    expect(chunks).toEqual([[expect.objectContaining({ content: 'a' })], [big], [expect.objectContaining({ content: 'b' })]]);
  });

  it('measures each message after the one before it in its chunk, and a chunk’s first from scratch', () => {
    // As a summarizer line leaves out a time its previous line gave: 10 tokens alone, 6 after another message.
    const cost = (_m: ConversationMessage, previous: ConversationMessage | undefined) => (previous ? 6 : 10);
    const messages = Array.from({ length: 7 }, (_, n) => msg('user', `m${n}`));
    const chunks = chunkByTokens(messages, 28, cost);
    // 10 + 6 + 6 + 6 = 28 fits; the fifth opens the next chunk and counts 10 again.
    expect(chunks.map((chunk) => chunk.length)).toEqual([4, 3]);
  });

  it('lets the last chunk take in a remainder under half the budget when both fit the stretch', () => {
    const messages = Array.from({ length: 13 }, (_, n) => msg('user', `m${n}`));
    const ten = () => 10;
    // 100 + 30: the 30 left over (under 50) joins the chunk before, which then holds 130 <= 150.
    expect(chunkByTokens(messages, 100, ten, 150).map((chunk) => chunk.length)).toEqual([13]);
    // Without a stretch, or one too small for both, the remainder is a chunk of its own.
    expect(chunkByTokens(messages, 100, ten).map((chunk) => chunk.length)).toEqual([10, 3]);
    expect(chunkByTokens(messages, 100, ten, 120).map((chunk) => chunk.length)).toEqual([10, 3]);
    // A remainder of half the budget or more is worth its own request.
    const fifteen = Array.from({ length: 15 }, (_, n) => msg('user', `m${n}`));
    expect(chunkByTokens(fifteen, 100, ten, 150).map((chunk) => chunk.length)).toEqual([10, 5]);
    // Only the last chunk stretches: the chunks before stay within the budget.
    const twentyThree = Array.from({ length: 23 }, (_, n) => msg('user', `m${n}`));
    expect(chunkByTokens(twentyThree, 100, ten, 150).map((chunk) => chunk.length)).toEqual([10, 13]);
  });

  it('never lets a stretched chunk split a unit or reorder messages', () => {
    const messages = Array.from({ length: 12 }, (_, n) => toolTurn(n)).flat();
    const chunks = chunkByTokens(messages, 120, chars4, 180);
    expect(chunks.flat()).toEqual(messages);
    for (const chunk of chunks) {
      expect(chunk.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id))).toEqual(chunk.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
      if (chunk.length > 1) expect(chunk.reduce((s, m) => s + chars4(m), 0)).toBeLessThanOrEqual(180);
    }
  });
});

describe('chunkStretchBudget', () => {
  const tokens = createTokenCounter({ mode: 'chars4' });
  const extractive = createExtractiveSummarizer();
  /** A model summarizer: it re-sends about 250 tokens of instructions with every request. */
  const model = (contextWindow: number): Summarizer => ({ ...extractive, contextWindow, promptOverhead: () => 'instructions '.repeat(80) });
  const chunks = resolveCompactionSettings({ contextWindow: 16_000 });

  it('stretches a model’s chunks by half, within the room one request has', () => {
    expect(summarizerInputBudget(model(128_000), tokens, chunks)).toBe(8_000);
    expect(chunkStretchBudget(model(128_000), tokens, chunks)).toBe(12_000);
    // A 12k summarizer window: its 80% share less the instructions, two summaries and 64 is under a chunk, so no stretch.
    const small = model(12_000);
    expect(chunkStretchBudget(small, tokens, chunks)).toBe(summarizerInputBudget(small, tokens, chunks));
    expect(summarizerInputBudget(small, tokens, chunks)).toBeLessThan(8_000);
  });

  it('does not stretch for a summarizer that sends no instructions (a request costs nothing)', () => {
    expect(chunkStretchBudget(extractive, tokens, chunks)).toBe(summarizerInputBudget(extractive, tokens, chunks));
  });
});

describe('buildTranscriptSegments', () => {
  const segmentsOf = (messages: ConversationMessage[]) =>
    buildTranscriptSegments(messages, { conversationId: 'c1', parentLabel: 'd0-x', operationId: 'op', segmentTokens: 100, countMessage: () => 10 });
  const turns = (count: number) => Array.from({ length: count }, (_, n) => msg('user', `turn ${n}`));

  it('cuts segments of about transcriptSegmentTokens, the last taking in a remainder under half a segment', () => {
    expect(segmentsOf(turns(13)).map((s) => s.count)).toEqual([13]);
    expect(segmentsOf(turns(25)).map((s) => s.count)).toEqual([10, 10, 5]);
    const messages = turns(23);
    const segments = segmentsOf(messages);
    expect(segments.map((s) => s.count)).toEqual([10, 13]);
    // Every message in exactly one segment, in order.
    expect(segments.flatMap((s) => s.sourceIds)).toEqual(messages.map((m) => m.id));
  });
});
