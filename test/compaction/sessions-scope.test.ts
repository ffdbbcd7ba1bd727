/** Sessions and the scopes over them, pure: where sessions begin, and where each scope cuts the verbatim tail. */
import { describe, expect, it } from 'vitest';
import { type CompactionSettings, resolveCompactionSettings } from '../../src/compaction/compaction-settings.js';
import { type CompactionPlan, clipArchiveBound, planCompaction } from '../../src/compaction/plan/plan.js';
import { sessionIdsOf, sessionSpans } from '../../src/conversation/sessions.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { chars4, msg, toolCall } from '../support/messages.js';

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 9, minute)).toISOString();

describe('sessionSpans', () => {
  it('starts a session where the time gap exceeds the setting, never inside a tool call and its result', () => {
    const messages = [
      msg('user', 'a', { createdAt: at(0) }),
      msg('assistant', 'b', { createdAt: at(5) }),
      // 45 minutes later: a new session.
      msg('user', 'c', { createdAt: at(50) }),
      msg('assistant', '', { createdAt: at(51), toolCalls: [toolCall('t1')] }),
      // The tool ran for an hour: its result still belongs to the call's session.
      msg('tool', 'done', { createdAt: at(115), toolCallId: 't1' }),
      // Exactly 30 minutes after the result: not more than the gap, same session.
      msg('assistant', 'd', { createdAt: at(145) }),
    ];
    expect(sessionSpans(messages, 30)).toEqual([
      { id: `auto-${at(0)}`, start: 0, end: 2, derived: true },
      { id: `auto-${at(50)}`, start: 2, end: 6, derived: true },
    ]);
    // Gap 0: no gap rule, one session named after its first message.
    expect(sessionSpans(messages, 0)).toEqual([{ id: `auto-${at(0)}`, start: 0, end: 6, derived: true }]);
    // Pure: the same messages give the same sessions.
    expect(sessionSpans(messages, 30)).toEqual(sessionSpans([...messages], 30));
  });

  it('follows given session ids: a change starts one, a message without an id continues, a pause inside a given session starts none', () => {
    const messages = [
      msg('user', 'a', { createdAt: at(0), sessionId: 'monday' }),
      msg('assistant', 'b', { createdAt: at(1) }),
      msg('user', 'c', { createdAt: at(120), sessionId: 'monday' }),
      msg('user', 'd', { createdAt: at(121), sessionId: 'tuesday' }),
      msg('assistant', 'e', { createdAt: at(122) }),
      // No id, after a pause: the gap rule starts a derived session.
      msg('user', 'f', { createdAt: at(300) }),
      msg('user', 'g', { createdAt: at(301), sessionId: 'monday' }),
    ];
    const spans = sessionSpans(messages, 30);
    expect(spans.map((s) => [s.id, s.start, s.end, s.derived])).toEqual([
      ['monday', 0, 3, false],
      ['tuesday', 3, 5, false],
      [`auto-${at(300)}`, 5, 6, true],
      // An id seen before, after another session: a new run of that session.
      ['monday', 6, 7, false],
    ]);
    expect(sessionIdsOf(spans, messages.length)).toEqual(['monday', 'monday', 'monday', 'tuesday', 'tuesday', `auto-${at(300)}`, 'monday']);
  });
});

/** `sessions` sessions of `turns` user/assistant pairs each, with session ids, plus a system prompt. */
function sessionHistory(sessions: number, turns: number, words = 12): ConversationMessage[] {
  const history = [msg('system', 'You are helpful.')];
  for (let s = 0; s < sessions; s++) {
    for (let t = 0; t < turns; t++) {
      const text = (who: string) => `${who} ${s}.${t} ${'word '.repeat(words)}`;
      history.push(msg('user', text('question'), { sessionId: `s${s}` }), msg('assistant', text('answer'), { sessionId: `s${s}` }));
    }
  }
  return history;
}

function plan(history: readonly ConversationMessage[], settings: CompactionSettings): CompactionPlan {
  const outcome = planCompaction(history, settings, chars4, { force: true });
  if (outcome.kind !== 'compact') throw new Error(`expected a plan, got ${outcome.reason}`);
  return outcome;
}

const sessionsOf = (messages: readonly ConversationMessage[]) => [...new Set(messages.map((m) => m.sessionId))];
const tokensOf = (messages: readonly ConversationMessage[]) => messages.reduce((sum, m) => sum + chars4(m), 0);
const base = { contextWindow: 4_000, keepRecentMessages: 4, maxSummaryTokens: 100 };

describe('no scope (the default)', () => {
  it('cuts by tokens as before, and reports no scope', () => {
    const settings = resolveCompactionSettings(base);
    expect(settings.sessionScope).toBe('none');
    const result = plan(sessionHistory(8, 6), settings);
    expect(result.scope).toBeUndefined();
    // Every body message has its session.
    expect(result.sessionOf.get(result.recent[0]!.id)).toBe(result.recent[0]!.sessionId);
  });
});

describe('fixedCount', () => {
  it('keeps the last N sessions verbatim and compacts every older one', () => {
    const history = sessionHistory(8, 6);
    for (const keepSessions of [1, 2, 3]) {
      const settings = resolveCompactionSettings({ ...base, sessionScope: 'fixedCount', keepSessions });
      const result = plan(history, settings);
      const kept = Array.from({ length: keepSessions }, (_, k) => `s${8 - keepSessions + k}`);
      expect(sessionsOf(result.recent)).toEqual(kept);
      expect(result.recent).toEqual(history.filter((m) => kept.includes(m.sessionId!)));
      // The first turn stays; everything between it and the kept sessions is compacted.
      expect([...result.system, ...result.firstTurns, ...result.compactable, ...result.recent]).toEqual(history);
      expect(result.scope).toMatchObject({ scope: 'fixedCount', cut: 'session', sessionsKept: keepSessions });
    }
  });

  it('keeps the sessions whole even past the token tail, as long as the history comes down under the trigger', () => {
    const settings = resolveCompactionSettings({ ...base, sessionScope: 'fixedCount', keepSessions: 2 });
    const history = sessionHistory(6, 20);
    const result = plan(history, settings);
    expect(sessionsOf(result.recent)).toEqual(['s4', 's5']);
    const defaultCut = plan(history, resolveCompactionSettings(base));
    expect(tokensOf(result.recent)).toBeGreaterThan(tokensOf(defaultCut.recent));
    const after = tokensOf([...result.system, ...result.firstTurns, ...result.recent]) + clipArchiveBound(settings);
    expect(after).toBeLessThan(settings.trigger);
  });

  it('falls back to the token cut inside the sessions when they would not fit under the trigger, and says so', () => {
    const settings = resolveCompactionSettings({ ...base, sessionScope: 'fixedCount', keepSessions: 2 });
    // Two sessions of 30 long turns: far more than the trigger leaves.
    const history = sessionHistory(4, 30, 40);
    const result = plan(history, settings);
    const defaultCut = plan(history, resolveCompactionSettings(base));
    expect(result.recent).toEqual(defaultCut.recent);
    expect(result.scope).toMatchObject({ scope: 'fixedCount', cut: 'tokens', sessionsKept: 1 });
    expect(result.scope!.reason).toMatch(/not under the trigger \(3200\)/);
  });

  it('has nothing to compact while the conversation holds no more than N sessions after its first turn', () => {
    const settings = resolveCompactionSettings({ ...base, sessionScope: 'fixedCount', keepSessions: 3 });
    expect(planCompaction(sessionHistory(3, 6), settings, chars4, { force: true })).toMatchObject({ kind: 'skip', reason: 'nothing_to_compact' });
  });
});

describe('tokenBudget', () => {
  it('compacts whole sessions, oldest first, until the rest fits the tail budget', () => {
    const settings = resolveCompactionSettings({ ...base, sessionScope: 'tokenBudget', keepRecentTokens: 500 });
    const history = sessionHistory(10, 3);
    const result = plan(history, settings);
    const sessionTokens = tokensOf(history.filter((m) => m.sessionId === 's9'));
    // The cut is on a session boundary: the tail is whole sessions, within the budget...
    expect(result.recent[0]!.sessionId).not.toBe(result.compactable[result.compactable.length - 1]!.sessionId);
    expect(tokensOf(result.recent)).toBeLessThanOrEqual(500);
    // ...and as many as fit: one more would not.
    expect(tokensOf(result.recent) + sessionTokens).toBeGreaterThan(500);
    expect(result.scope).toMatchObject({ scope: 'tokenBudget', cut: 'session', sessionsKept: sessionsOf(result.recent).length });
    expect(sessionsOf(result.recent).length).toBeGreaterThanOrEqual(2);
  });

  it('cuts by tokens, at a turn boundary, when not even the newest session fits the budget', () => {
    const settings = resolveCompactionSettings({ ...base, sessionScope: 'tokenBudget', keepRecentTokens: 300 });
    const history = sessionHistory(4, 20);
    const result = plan(history, settings);
    expect(result.recent).toEqual(plan(history, resolveCompactionSettings({ ...base, keepRecentTokens: 300 })).recent);
    expect(result.recent[0]!.role).toBe('user');
    expect(result.scope).toMatchObject({ scope: 'tokenBudget', cut: 'tokens', sessionsKept: 1 });
    expect(result.scope!.reason).toMatch(/larger than the tail budget \(300\)/);
  });

  it('uses sessions derived from the time gap when messages carry no id', () => {
    const settings = resolveCompactionSettings({ ...base, sessionScope: 'tokenBudget', keepRecentTokens: 500, sessionGapMinutes: 60 });
    const history = sessionHistory(10, 3).map((m, i) => {
      const { sessionId: _, ...rest } = m;
      // Sessions a day apart, turns a minute apart.
      const session = m.sessionId === undefined ? 0 : Number(m.sessionId.slice(1));
      return { ...rest, createdAt: new Date(Date.UTC(2024, 0, 1 + session, 9, i % 60)).toISOString() };
    });
    const result = plan(history, settings);
    expect(result.scope).toMatchObject({ cut: 'session' });
    const firstKept = result.recent[0]!;
    expect(result.sessionOf.get(firstKept.id)).toBe(`auto-${firstKept.createdAt}`);
    expect(Date.parse(firstKept.createdAt) - Date.parse(result.compactable[result.compactable.length - 1]!.createdAt)).toBeGreaterThan(60 * 60_000);
  });
});
