import { describe, expect, it } from 'vitest';
import { callIdsOpenedBy, repeatedCallId, toolGroupStarts, walkToolGroups, type ToolGroupMember } from '../../src/conversation/tool-groups.js';

const user: ToolGroupMember = { role: 'user' };
const calls = (...ids: string[]): ToolGroupMember => ({ role: 'assistant', toolCalls: ids.map((id) => ({ id })) });
const result: ToolGroupMember = { role: 'tool' };

/** Each message's standing on one walk; tool results carry their call id in `ids`. */
function standings(messages: ToolGroupMember[], ids: Array<string | undefined>, opener?: ToolGroupMember | 'unknown') {
  const walk = walkToolGroups(opener);
  return messages.map((message, i) => walk.standing(message, ids[i]));
}

describe('tool groups', () => {
  it('a result answers a call of the assistant message opening its group, also after other results', () => {
    expect(standings([user, calls('a', 'b'), result, result, result], [undefined, undefined, 'b', 'a', 'a'])).toEqual([
      undefined,
      undefined,
      'answers',
      'answers',
      'answers',
    ]);
  });

  it('a result after a later user or assistant message answers nothing, even when its call id was used earlier', () => {
    expect(standings([calls('a'), user, result], [undefined, undefined, 'a'])).toEqual([undefined, undefined, 'unanswered']);
    expect(standings([calls('a'), { role: 'assistant' }, result], [undefined, undefined, 'a'])).toEqual([undefined, undefined, 'unanswered']);
    expect(standings([calls('a'), result], [undefined, 'b'])).toEqual([undefined, 'unanswered']);
  });

  it('call ids may repeat across turns: the result is matched within its own group', () => {
    expect(standings([calls('a'), result, user, calls('a'), result], [undefined, 'a', undefined, undefined, 'a'])).toEqual([
      undefined,
      'answers',
      undefined,
      undefined,
      'answers',
    ]);
  });

  it('results that open the list are checked against the given opener, or left to the caller when it is unknown', () => {
    expect(standings([result, user], ['a'], calls('a'))).toEqual(['answers', undefined]);
    expect(standings([result], ['a'], user)).toEqual(['unanswered']);
    expect(standings([result], ['a'])).toEqual(['unanswered']);
    expect(standings([result, calls('b'), result], ['a', undefined, 'b'], 'unknown')).toEqual(['opener_unknown', undefined, 'answers']);
  });

  it('the clip-archive neither opens nor closes a group', () => {
    const clip: ToolGroupMember = { role: 'system', kind: 'clip_archive' };
    expect(standings([calls('a'), clip, result], [undefined, undefined, 'a'])).toEqual([undefined, undefined, 'answers']);
  });

  it('only an assistant message opens calls', () => {
    expect([...callIdsOpenedBy(calls('a', 'b'))]).toEqual(['a', 'b']);
    expect([...callIdsOpenedBy({ role: 'user', toolCalls: [{ id: 'a' }] })]).toEqual([]);
    expect([...callIdsOpenedBy(undefined)]).toEqual([]);
  });

  it('group starts: every message that is not a tool result, and the first one', () => {
    expect(toolGroupStarts([result, user, calls('a'), result, result, user])).toEqual([0, 1, 2, 5]);
    // A second result for an answered call stays in its group: a cut never separates it from the call.
    expect(toolGroupStarts([calls('a'), result, result])).toEqual([0]);
    expect(toolGroupStarts([])).toEqual([]);
  });

  it('repeatedCallId finds the first call of one message that repeats an id', () => {
    expect(repeatedCallId([{ id: 'a' }, { id: 'b' }, { id: 'a' }, { id: 'b' }])).toEqual({ index: 2, first: 0 });
    expect(repeatedCallId([{ id: 'a' }, { id: 'b' }])).toBeUndefined();
  });
});
