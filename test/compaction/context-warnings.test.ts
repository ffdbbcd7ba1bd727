/**
 * The context_warning tracker alone: once per crossing, re-armed below the mark, a running count that appends add
 * to (loading the history once to start it), and a count dropped when the live rows change otherwise.
 */
import { describe, expect, it } from 'vitest';
import type { CompactionEvent } from '../../src/compaction/compaction-result.js';
import { createContextWarnings, MAX_TRACKED } from '../../src/compaction/usage/context-warnings.js';
import type { ConversationMessage } from '../../src/conversation/types.js';

/** Messages whose token count is their content's length (the tracker is given that counter below). */
function rows(fromSeq: number, sizes: number[]): ConversationMessage[] {
  return sizes.map((size, i) => ({
    id: `m${fromSeq + i}`,
    conversationId: 'c',
    seq: fromSeq + i,
    role: 'user',
    content: 'x'.repeat(size),
    createdAt: '2024-01-01T00:00:00.000Z',
    kind: 'message',
  }));
}

function setup(live: ConversationMessage[] = []) {
  const events: CompactionEvent[] = [];
  let loads = 0;
  const warnings = createContextWarnings({
    settingsOf: () => ({ contextWindow: 1_000, warnAt: 0.7 }),
    countMessage: (m) => m.content.length,
    emit: (event) => events.push(event),
  });
  const load = async () => {
    loads++;
    return { history: live, factor: 1 };
  };
  /** Store `sizes` as the next messages of `live` and report them as one append. */
  const append = async (sizes: number[], conversationId = 'c') => {
    const stored = rows((live.at(-1)?.seq ?? 0) + 1, sizes);
    live.push(...stored);
    await warnings.appended(conversationId, stored, load);
  };
  return { warnings, events, append, live, loads: () => loads };
}

describe('context warnings', () => {
  it('warns once when appends cross floor(window × warnAt), not again above it', async () => {
    const { warnings, events, append, loads } = setup();
    expect(warnings.thresholdOf('c')).toBe(700);
    await append([300, 300]);
    expect(events).toEqual([]);
    await append([100]);
    expect(events).toEqual([{ type: 'context_warning', conversationId: 'c', tokens: 700, threshold: 700 }]);
    await append([50]);
    await append([50]);
    expect(events).toHaveLength(1);
    // One load started the count; every later append counted only its own messages.
    expect(loads()).toBe(1);
  });

  it('warns again after the conversation was seen below the mark and crosses it once more', async () => {
    const { warnings, events, append, live } = setup();
    await append([800]);
    expect(events).toHaveLength(1);
    // A compaction brings it down: the count is dropped and the warning re-armed.
    live.splice(0, live.length, ...rows(1, [200]));
    warnings.changed('c', 200);
    await append([100]);
    expect(events).toHaveLength(1);
    await append([500]);
    expect(events.map((e) => (e.type === 'context_warning' ? e.tokens : 0))).toEqual([800, 800]);
  });

  it('a compaction that stays above the mark does not warn again; one seen below re-arms', async () => {
    const { warnings, events, append, live } = setup();
    await append([900]);
    live.splice(0, live.length, ...rows(1, [750]));
    warnings.changed('c', 750);
    await append([10]);
    expect(events).toHaveLength(1);
    warnings.observe('c', 100, 5);
    warnings.observe('c', 720, 6);
    expect(events).toHaveLength(2);
  });

  it('planning counts (observe) restart the running count: no load afterwards, appends add to it', async () => {
    const { warnings, events, append, loads } = setup();
    warnings.observe('c', 600, 0);
    await append([50]);
    expect(loads()).toBe(0);
    expect(events).toEqual([]);
    await append([50]);
    expect(events).toEqual([{ type: 'context_warning', conversationId: 'c', tokens: 700, threshold: 700 }]);
    warnings.observe('c', 700, 2);
    expect(events).toHaveLength(1);
  });

  it('counts a message once: those the loaded history already holds are not added again', async () => {
    const live = rows(1, [600]);
    const { warnings, events } = setup(live);
    const later = rows(2, [50]);
    live.push(...later);
    // The load happens after the append stored its message, so the history holds it already.
    await warnings.appended('c', later, async () => ({ history: live, factor: 1 }));
    await warnings.appended('c', later, async () => ({ history: live, factor: 1 }));
    expect(events).toEqual([]);
    await warnings.appended('c', rows(3, [50]), async () => ({ history: live, factor: 1 }));
    expect(events).toEqual([{ type: 'context_warning', conversationId: 'c', tokens: 700, threshold: 700 }]);
  });

  it('concurrent first appends share one load', async () => {
    const { events, append, loads } = setup();
    await Promise.all([append([400]), append([400])]);
    expect(loads()).toBe(1);
    expect(events).toHaveLength(1);
  });

  it('a failing load skips the check without throwing; the next append tries again', async () => {
    const events: CompactionEvent[] = [];
    const warnings = createContextWarnings({
      settingsOf: () => ({ contextWindow: 1_000, warnAt: 0.7 }),
      countMessage: (m) => m.content.length,
      emit: (e) => events.push(e),
    });
    await expect(warnings.appended('c', rows(1, [800]), () => Promise.reject(new Error('store down')))).resolves.toBeUndefined();
    expect(events).toEqual([]);
    await warnings.appended('c', rows(2, [10]), async () => ({ history: rows(1, [800, 10]), factor: 1 }));
    expect(events).toEqual([{ type: 'context_warning', conversationId: 'c', tokens: 810, threshold: 700 }]);
  });

  it('keeps conversations apart, and forgets the least recently seen past MAX_TRACKED', async () => {
    const { warnings, events } = setup();
    warnings.observe('a', 800, 1);
    warnings.observe('b', 100, 1);
    expect(events.map((e) => (e.type === 'context_warning' ? e.conversationId : ''))).toEqual(['a']);
    for (let i = 0; i < MAX_TRACKED; i++) warnings.observe(`filler-${i}`, 0, 0);
    // 'a' was forgotten: seen above the mark again, it warns as on first sight.
    warnings.observe('a', 800, 1);
    expect(events).toHaveLength(2);
  });
});
