/** Tool pairs, split pairs and tracked values on a hand-made run (call ids repeat, as in τ-bench). */
import { describe, expect, it } from 'vitest';
import type { NewMessage, ToolCall } from '../../src/conversation/types.js';
import { aggregateRuns, splitPairs, toolPairs, valueQuery, valuesFromToolOutputs } from '../../src/eval/agentic-metrics.js';

const call = (id: string, name: string, args: string): ToolCall => ({ id, type: 'function', function: { name, arguments: args } });

const run: NewMessage[] = [
  { role: 'system', content: 'policy' },
  { role: 'user', content: 'My user id is mia_li_3668; cancel my trip.' },
  { role: 'assistant', content: '', toolCalls: [call('call_1', 'get_user_details', '{"user_id":"mia_li_3668"}')] },
  { role: 'tool', toolCallId: 'call_1', content: '{"reservations":["NO6JO3","AIXC49"]}' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      call('call_1', 'get_reservation_details', '{"reservation_id":"NO6JO3"}'),
      call('call_2', 'get_reservation_details', '{"reservation_id":"AIXC49"}'),
    ],
  },
  { role: 'tool', toolCallId: 'call_1', content: '{"reservation_id":"NO6JO3","status":"active"}' },
  { role: 'tool', toolCallId: 'call_2', content: '{"reservation_id":"AIXC49","status":"active"}' },
  { role: 'assistant', content: '', toolCalls: [call('call_3', 'cancel_reservation', '{"reservation_id":"NO6JO3"}')] },
  { role: 'tool', toolCallId: 'call_3', content: '{"ok":true}' },
  { role: 'assistant', content: 'Done.' },
];

describe('tool pairs', () => {
  it('pairs results with calls by position, though call ids repeat', () => {
    expect(toolPairs(run)).toEqual([
      { call: 2, result: 3 },
      { call: 4, result: 5 },
      { call: 4, result: 6 },
      { call: 7, result: 8 },
    ]);
  });

  it('a pair is split when one side is in the prompt and the other is not; later results are not judged yet', () => {
    const pairs = toolPairs(run);
    const prompt = new Set([0, 1, 5, 6, 7]);
    // Pair 0 (2, 3): both out, together. Pairs 1, 2 (4 out; 5, 6 in): split. Pair 3's result (8) comes after 8 messages.
    expect(splitPairs(pairs, (i) => prompt.has(i), 8)).toEqual([1, 2]);
  });
});

describe('tracked values', () => {
  const actions = [{ name: 'cancel_reservation', kwargs: { reservation_id: 'NO6JO3', user_id: 'mia_li_3668', refund: 1 } }];

  it('keeps the arguments first seen in a tool output, with the message that needs them', () => {
    // The user gave the user id: not tracked. The refund is too short to look for.
    expect(valuesFromToolOutputs(actions, run)).toEqual([
      { action: 'cancel_reservation', key: 'reservation_id', value: 'NO6JO3', firstSeenAt: 3, neededAt: 4 },
    ]);
    expect(valueQuery({ action: 'cancel_reservation', key: 'reservation_id' })).toBe('cancel reservation reservation id');
  });

  it('aggregates integrity and value availability over runs', () => {
    const value = { action: 'a', key: 'k', value: 'v', firstSeenAt: 1, neededAt: 2 };
    const m = aggregateRuns([
      {
        runId: 'r1',
        toolPairs: 4,
        splitPairs: 1,
        values: [
          { ...value, inPrompt: true, viaMemory: false },
          { ...value, inPrompt: false, viaMemory: true },
        ],
      },
      {
        runId: 'r2',
        toolPairs: 4,
        splitPairs: 0,
        values: [
          { ...value, inPrompt: false, viaMemory: false },
          { ...value, inPrompt: true, viaMemory: true },
        ],
      },
    ]);
    expect(m).toEqual({ runs: 2, toolPairs: 8, pairIntegrity: 7 / 8, values: 4, valueInPrompt: 0.5, valueViaMemory: 0.5, valueAvailability: 0.75 });
  });
});
