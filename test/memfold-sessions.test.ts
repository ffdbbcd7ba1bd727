/**
 * Sessions through the public API (`createMemfold({ store: 'memory' })`): session ids on append, the fixedCount and
 * tokenBudget scopes deciding what a compaction keeps, and the sessions every archived batch and segment records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CompactionSettings } from '../src/compaction/compaction-settings.js';
import type { ArchiveEntry, NewMessage } from '../src/conversation/types.js';
import { createMemfold, type Memfold } from '../src/memfold.js';

const opened: Memfold[] = [];
afterEach(async () => {
  while (opened.length > 0) await opened.pop()!.close();
});

async function open(compaction: Partial<CompactionSettings>): Promise<Memfold> {
  const memfold = await createMemfold({
    store: 'memory',
    env: {},
    compaction: { contextWindow: 4_000, chunkTokens: 300, maxSummaryTokens: 120, ...compaction },
  });
  opened.push(memfold);
  return memfold;
}

/** Session `s` of a conversation: `turns` user/assistant pairs on day `s`, a minute apart, with or without its id. */
function session(s: number, turns: number, withId = true): NewMessage[] {
  return Array.from({ length: turns }, (_, t) =>
    (['user', 'assistant'] as const).map((role, k) => ({
      role,
      content: `${role === 'user' ? 'Question' : 'Answer'} ${s}.${t} about topic-${s}-${t}. ${'filler words here '.repeat(24)}`,
      createdAt: new Date(Date.UTC(2024, 2, 1 + s, 9, 2 * t + k)).toISOString(),
      ...(withId ? { sessionId: `day-${s}` } : {}),
    })),
  ).flat();
}

const distinct = (ids: Array<string | undefined>) => [...new Set(ids.filter((id): id is string => id !== undefined))];

/** Every archived entry records exactly the sessions under it: of its messages, or the union of its children's. */
async function expectRecordedSessions(memfold: Memfold, conversationId: string, sessionOf: (messageId: string) => string): Promise<ArchiveEntry[]> {
  const summaries = await memfold.archive.list({ conversationId, kind: 'summary' });
  const transcripts = await memfold.archive.list({ conversationId, kind: 'transcript' });
  const byLabel = new Map(summaries.map((b) => [b.label, b]));
  for (const segment of transcripts) expect(segment.sessions).toEqual(distinct(segment.messages!.map((m) => sessionOf(m.id))));
  const under = (batch: ArchiveEntry): string[] =>
    batch.depth === 0 ? distinct(batch.sourceIds.map(sessionOf)) : distinct(batch.sourceIds.flatMap((label) => under(byLabel.get(label)!)));
  for (const batch of summaries) expect(batch.sessions, batch.label).toEqual(under(batch));
  return summaries;
}

describe('sessions through createMemfold', () => {
  it('fixedCount keeps the last N sessions verbatim and compacts the older ones; batches record their sessions', async () => {
    const memfold = await open({ sessionScope: 'fixedCount', keepSessions: 2 });
    const conversationId = 'fixed';
    const appended = await memfold.append(conversationId, [
      { role: 'system', content: 'You are a helpful assistant.' },
      ...[0, 1, 2, 3, 4].flatMap((s) => session(s, 5)),
    ]);
    const sessionOf = new Map(appended.map((m) => [m.id, m.sessionId ?? '']));

    const result = await memfold.compact(conversationId);
    expect(result.status).toBe('compacted');
    expect(result.scope).toMatchObject({ scope: 'fixedCount', cut: 'session', sessionsKept: 2 });
    const live = await memfold.history(conversationId);
    // System prompt, clip-archive, the first turn (kept verbatim), then exactly the last two sessions.
    const body = live.filter((m) => m.role !== 'system');
    expect(body.slice(0, 2).map((m) => m.sessionId)).toEqual(['day-0', 'day-0']);
    expect(body.slice(2)).toEqual(appended.filter((m) => m.sessionId === 'day-3' || m.sessionId === 'day-4'));

    // More sessions: each compaction keeps the newest two; frontier batches fold into a higher depth.
    for (const s of [5, 6, 7, 8, 9]) {
      for (const m of await memfold.append(conversationId, session(s, 5))) sessionOf.set(m.id, m.sessionId!);
      await memfold.compact(conversationId);
    }
    const summaries = await expectRecordedSessions(memfold, conversationId, (id) => sessionOf.get(id)!);
    expect(Math.max(...summaries.map((b) => b.depth))).toBeGreaterThanOrEqual(1);
    const archived = distinct(summaries.flatMap((b) => b.sessions ?? []));
    expect(archived).toEqual(['day-0', 'day-1', 'day-2', 'day-3', 'day-4', 'day-5', 'day-6', 'day-7']);
    const liveSessions = distinct((await memfold.history(conversationId)).map((m) => m.sessionId));
    expect(liveSessions).toEqual(['day-0', 'day-8', 'day-9']);
  });

  it('tokenBudget compacts whole sessions until the rest fits; sessions come from the time gap when no id is given', async () => {
    const memfold = await open({ sessionScope: 'tokenBudget', sessionGapMinutes: 60 });
    const conversationId = 'budget';
    const appended = await memfold.append(
      conversationId,
      [0, 1, 2, 3, 4, 5, 6, 7].flatMap((s) => session(s, 3, false)),
    );
    expect(appended.every((m) => m.sessionId === undefined)).toBe(true);
    const result = await memfold.compact(conversationId);
    expect(result.status).toBe('compacted');
    expect(result.scope).toMatchObject({ scope: 'tokenBudget', cut: 'session' });
    const live = (await memfold.history(conversationId)).filter((m) => m.kind !== 'clip_archive');
    // The first turn, then whole days: the kept tail starts with the first message of a day.
    const tail = live.slice(2);
    expect(tail[0]!.createdAt.slice(11)).toBe('09:00:00.000Z');
    expect(tail.length % 6).toBe(0);
    expect(tail.length / 6).toBe(result.scope!.sessionsKept);
    // Derived sessions are named after their first message, and recorded so on the batches.
    const day = (id: string) =>
      `auto-${appended.find((m) => m.createdAt.slice(0, 10) === appended.find((a) => a.id === id)!.createdAt.slice(0, 10))!.createdAt}`;
    const summaries = await expectRecordedSessions(memfold, conversationId, day);
    expect(summaries[0]!.sessions![0]).toBe(`auto-${appended[0]!.createdAt}`);
  });

  it('without a scope compacts as before, still recording the sessions of what it archived', async () => {
    const memfold = await open({});
    const conversationId = 'plain';
    const appended = await memfold.append(
      conversationId,
      [0, 1, 2, 3, 4].flatMap((s) => session(s, 5)),
    );
    const result = await memfold.compact(conversationId);
    expect(result.status).toBe('compacted');
    expect(result.scope).toBeUndefined();
    await expectRecordedSessions(memfold, conversationId, (id) => appended.find((m) => m.id === id)!.sessionId!);
  });
});
