/** Which incoming messages are new: the whole history resent, a window, the new turn alone, a compacted store. */
import { describe, expect, it } from 'vitest';
import type { ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { firstUnstored, sdkView, unstoredMessages } from '../../src/integrations/unstored-messages.js';
import { msg, toolCall } from '../support/messages.js';

const u = (text: string): NewMessage => ({ role: 'user', content: text });
const a = (text: string): NewMessage => ({ role: 'assistant', content: text });
const stored = (...messages: NewMessage[]): ConversationMessage[] => messages.map(({ createdAt: _, pinned: __, ...m }) => msg(m.role, m.content, m));

describe('unstoredMessages', () => {
  const history = stored(u('hi'), a('hello'), u('hi'), a('again'));

  it('takes what follows the stored messages, whether the app resends all, a window, or the new turn', () => {
    expect(unstoredMessages(history, [u('hi'), a('hello'), u('hi'), a('again'), u('hi')])).toEqual([u('hi')]);
    expect(unstoredMessages(history, [u('hi'), a('again'), u('next')])).toEqual([u('next')]);
    expect(unstoredMessages(history, [u('hi')])).toEqual([u('hi')]);
    expect(unstoredMessages([], [u('hi'), a('x')])).toEqual([u('hi'), a('x')]);
  });

  it('matches a tool result by its call id (tier 2 may have cleared its output) and skips steps the SDK no longer sends', () => {
    const withTools = stored(
      u('q'),
      { role: 'assistant', content: '', toolCalls: [toolCall('c1')] },
      { role: 'tool', content: '[cleared]', toolCallId: 'c1' },
      a('answer'),
    );
    expect(unstoredMessages(withTools, [u('q'), { role: 'tool', content: 'full output', toolCallId: 'c1' }, a('answer'), u('next')])).toEqual([u('next')]);
    expect(unstoredMessages(withTools, [u('q'), a('answer'), u('next')])).toEqual([u('next')]);
  });

  it('matches after a compaction archived the head, and reads a retried message as stored', () => {
    const live = stored(u('m3'), a('r3'), u('m4'), a('r4'));
    expect(unstoredMessages(live, [u('m1'), a('r1'), u('m2'), a('r2'), u('m3'), a('r3'), u('m4'), a('r4'), u('m5')])).toEqual([u('m5')]);
    expect(unstoredMessages(stored(u('m1'), a('r1'), u('retry')), [u('retry')])).toEqual([]);
  });

  it('hides the calls of a tool the integration runs itself', () => {
    const history = stored(
      u('q'),
      { role: 'assistant', content: 'looking', toolCalls: [toolCall('r1', 'memory_read')] },
      { role: 'tool', content: 'found', toolCallId: 'r1' },
      { role: 'assistant', content: '', toolCalls: [toolCall('r2', 'memory_read'), toolCall('w1', 'weather')] },
      { role: 'tool', content: 'found', toolCallId: 'r2' },
    );
    expect(sdkView(history, 'memory_read').map((m) => [m.role, m.toolCalls?.map((c) => c.id)])).toEqual([
      ['user', undefined],
      ['assistant', ['w1']],
    ]);
    expect(firstUnstored([], ['x'])).toBe(0);
  });
});
