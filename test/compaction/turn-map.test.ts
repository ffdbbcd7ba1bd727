/** The turn map: a turn is a user message and what follows it; a tool result stays with its call. */
import { describe, expect, it } from 'vitest';
import { turnAt, turnMap } from '../../src/conversation/turn-map.js';
import type { ConversationMessage } from '../../src/conversation/types.js';

type Row = Pick<ConversationMessage, 'role' | 'toolCalls' | 'toolCallId' | 'seq'>;
const call = (seq: number, id: string): Row => ({ seq, role: 'assistant', toolCalls: [{ id, type: 'function', function: { name: 'read', arguments: '{}' } }] });

describe('turnMap', () => {
  it('maps each turn to its message range, the messages before the first user message as a turn of their own', () => {
    const rows: Row[] = [
      { seq: 10, role: 'assistant' },
      { seq: 11, role: 'user' },
      call(12, 'c1'),
      { seq: 13, role: 'tool', toolCallId: 'c1' },
      { seq: 14, role: 'assistant' },
      { seq: 20, role: 'user' },
      { seq: 21, role: 'user' },
    ];
    expect(turnMap(rows)).toEqual([
      { turn: 0, start: 0, end: 1, firstSeq: 10, lastSeq: 10, opensWithUser: false },
      { turn: 1, start: 1, end: 5, firstSeq: 11, lastSeq: 14, opensWithUser: true },
      { turn: 2, start: 5, end: 6, firstSeq: 20, lastSeq: 20, opensWithUser: true },
      { turn: 3, start: 6, end: 7, firstSeq: 21, lastSeq: 21, opensWithUser: true },
    ]);
    expect(turnMap([])).toEqual([]);
  });

  it('finds the turn of any message index, and none outside the map', () => {
    const rows: Row[] = Array.from({ length: 9 }, (_, i) => ({ seq: i + 1, role: i % 3 === 0 ? 'user' : 'assistant' }));
    const map = turnMap(rows);
    expect(rows.map((_, i) => turnAt(map, i)?.turn)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2]);
    expect(turnAt(map, -1)).toBeUndefined();
    expect(turnAt(map, 9)).toBeUndefined();
  });
});
