/**
 * What remains live of a turn whose beginning was archived (the rest of a split turn) is a turn of its own: it never
 * joins the kept first turn, so a later compaction archives it like any other turn instead of keeping it forever.
 */
import { describe, expect, it } from 'vitest';
import { resolveCompactionSettings } from '../../src/compaction/compaction-settings.js';
import { planCompaction } from '../../src/compaction/plan/plan.js';
import { turnMap } from '../../src/conversation/turn-map.js';
import { turnStarts } from '../../src/conversation/turns.js';
import type { ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { createMemfold } from '../../src/memfold.js';
import { checkInvariants } from '../support/invariants.js';
import { chars4, msg, toolCall } from '../support/messages.js';

/** A message at a given seq, as the live store holds it after the messages before it were archived. */
const at = (seq: number, role: ConversationMessage['role'], content: string, extra: Partial<ConversationMessage> = {}) => msg(role, content, { seq, ...extra });

describe('turns of a live history with archived messages in it', () => {
  // The opening turn (seq 2-3), then what remains live of a turn whose user message and first steps were archived
  // (seq 40-42), then a new turn.
  const opening = [at(2, 'user', 'The project is memfold.'), at(3, 'assistant', 'Understood.')];
  const rest = [at(40, 'assistant', '', { toolCalls: [toolCall('r1')] }), at(41, 'tool', 'output', { toolCallId: 'r1' }), at(42, 'assistant', 'Done.')];
  const next = [at(43, 'user', 'Next task.'), at(44, 'assistant', 'On it.')];
  const body = [...opening, ...rest, ...next];
  const later = Array.from({ length: 4 }, (_, k) => [at(45 + 2 * k, 'user', `Task ${k}. ${'words '.repeat(20)}`), at(46 + 2 * k, 'assistant', 'Done.')]).flat();

  it('start a turn where a message follows archived ones', () => {
    expect(turnStarts(body)).toEqual([0, 2, 5]);
    expect(turnMap(body).map(({ firstSeq, lastSeq, opensWithUser }) => ({ firstSeq, lastSeq, opensWithUser }))).toEqual([
      { firstSeq: 2, lastSeq: 3, opensWithUser: true },
      { firstSeq: 40, lastSeq: 42, opensWithUser: false },
      { firstSeq: 43, lastSeq: 44, opensWithUser: true },
    ]);
  });

  const settings = resolveCompactionSettings({ contextWindow: 2_000, keepRecentTokens: 100, keepRecentMessages: 2, keepFirstTurns: 1 });
  const system = at(1, 'system', 'You are an agent.');
  const clip = msg('system', '[Context Summary: 1 archived batch]', { kind: 'clip_archive', seq: 0 });
  const plan = (history: ConversationMessage[]) => {
    const planned = planCompaction(history, settings, chars4, { force: true });
    if (planned.kind !== 'compact') throw new Error(`expected a plan, got ${planned.reason}`);
    return planned;
  };

  it('keep only the opening turn as the first turn: the rest of the split turn is compacted', () => {
    const planned = plan([system, clip, ...body, ...later]);
    expect(planned.firstTurns).toEqual(opening);
    expect(planned.compactable.slice(0, rest.length)).toEqual(rest);
  });

  it('keep no first turn once the opening itself was archived', () => {
    expect(plan([system, clip, ...rest, ...next, ...later]).firstTurns).toEqual([]);
    // A history that was never compacted (no clip-archive) may number its messages from anywhere: its first turn stays.
    expect(plan([system, ...rest, ...next, ...later]).firstTurns).toEqual([...rest, ...next]);
  });
});

/** One agent turn: a request, `steps` tool calls with their results, and a closing answer, a few seconds apart. */
function agentTurn(task: number, steps: number): NewMessage[] {
  const time = (second: number) => new Date(Date.UTC(2024, 3, 2, 9, task, second)).toISOString();
  const turn: NewMessage[] = [{ role: 'user', content: `Task ${task}: fix module m${task}. ${'detail '.repeat(20)}`, createdAt: time(0) }];
  for (let s = 1; s <= steps; s++) {
    const id = `call_${task}_${s}`;
    turn.push({
      role: 'assistant',
      content: `Step ${s} of task ${task}.`,
      toolCalls: [toolCall(id, 'read_file', `{"path":"src/f${s}.ts"}`)],
      createdAt: time(2 * s),
    });
    turn.push({ role: 'tool', toolCallId: id, content: `output ${task}.${s} ${'line of output '.repeat(25)}`, createdAt: time(2 * s + 1) });
  }
  turn.push({ role: 'assistant', content: `Task ${task} done. ${'summary '.repeat(10)}`, createdAt: time(59) });
  return turn;
}

describe('the rest of a split turn, through memfold', () => {
  it('is archived by a later compaction: the live history holds the opening turn and one unbroken recent run', async () => {
    const memfold = await createMemfold({
      store: 'memory',
      env: {},
      compaction: { contextWindow: 4_000, keepRecentTokens: 600, keepRecentMessages: 4, chunkTokens: 800, clearToolOutputs: false },
    });
    const id = 'agent';
    try {
      const appended = await memfold.append(id, [
        { role: 'system', content: 'You are a coding agent.', createdAt: '2024-04-02T08:59:00.000Z' },
        { role: 'user', content: 'The project is memfold; keep its tests green.', createdAt: '2024-04-02T08:59:10.000Z' },
        { role: 'assistant', content: 'Understood.', createdAt: '2024-04-02T08:59:20.000Z' },
      ]);
      const openingIds = appended.slice(1).map((m) => m.id);
      // Messages seen live after archived ones, right after the opening turn: the rests of split turns.
      const rests = new Set<string>();
      let compactions = 0;
      for (let task = 1; task <= 5; task++) {
        const turn = agentTurn(task, 12);
        // The agent appends a few messages at a time and compacts after each append, as its loop would.
        for (let i = 0; i < turn.length; i += 9) {
          appended.push(...(await memfold.append(id, turn.slice(i, i + 9))));
          const result = await memfold.compact(id);
          expect(result.status, result.error).not.toBe('failed');
          if (result.status === 'compacted') compactions++;
          const body = (await memfold.history(id)).filter((m) => m.role !== 'system');
          expect(body.slice(0, 2).map((m) => m.id)).toEqual(openingIds);
          if (body.length > 2 && body[2]!.seq > body[1]!.seq + 1 && body[2]!.role !== 'user') {
            const restEnd = body.findIndex((m, k) => k > 2 && m.role === 'user');
            for (const m of body.slice(2, restEnd < 0 ? body.length : restEnd)) rests.add(m.id);
          }
          // After the opening turn, the live messages run without a hole: nothing older stays behind.
          const after = body.slice(2).map((m) => m.seq);
          expect(after, `round ${task}.${i / 9}`).toEqual(after.map((_, k) => after[0]! + k));
        }
      }
      expect(compactions).toBeGreaterThanOrEqual(3);
      const live = new Set((await memfold.history(id)).map((m) => m.id));
      const archivedRests = [...rests].filter((m) => !live.has(m));
      // Rests of earlier turns were archived on later rounds (only the newest turn's may still be live).
      expect(archivedRests.length).toBeGreaterThan(10);
      const contentOf = new Map(appended.map((m) => [m.id, m.content]));
      const liveRests = [...rests].filter((m) => live.has(m)).map((m) => contentOf.get(m)!);
      expect(liveRests.filter((content) => !/task 5\b|^output 5\./i.test(content))).toEqual([]);
      const report = await checkInvariants(memfold, id, appended, { toolPairs: true });
      expect(report.live + report.archived).toBe(appended.length);
    } finally {
      await memfold.close();
    }
  });
});
