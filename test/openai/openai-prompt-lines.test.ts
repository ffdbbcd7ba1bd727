import { describe, expect, it } from 'vitest';
import { extractTagged, renderUserMessage, TRANSCRIPT_TAG, TURN_PREFIX_NOTE } from '../../src/openai/openai-prompt.js';

describe('the summarizer request’s transcript lines', () => {
  it('give the time on the first line and again only when it changes', () => {
    const at = (minute: number) => `2024-06-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
    const user = renderUserMessage({
      purpose: 'fold',
      maxOutputTokens: 100,
      lines: [
        { time: at(0), role: 'user', name: 'Ann', text: 'first' },
        { time: at(0), role: 'assistant', text: 'same minute' },
        { time: at(5), role: 'user', name: 'Ann', text: 'later\nsecond line' },
        { time: at(5), role: 'tool', toolCallId: 'c1', text: '{"ok":true}' },
      ],
    });
    expect(extractTagged(user, TRANSCRIPT_TAG)!.split('\n')).toEqual([
      `[${at(0)}] user(Ann): first`,
      'assistant: same minute',
      `[${at(5)}] user(Ann): later`,
      '  second line',
      'tool#c1: {"ok":true}',
    ]);
  });

  it('say before the material, outside its tags, when the lines open a turn still in progress', () => {
    const lines = [{ time: '2024-06-01T10:00:00.000Z', role: 'user' as const, text: 'Fix the parser.' }];
    const prefix = renderUserMessage({ purpose: 'fold', maxOutputTokens: 100, lines, turnPrefix: true });
    const plain = renderUserMessage({ purpose: 'fold', maxOutputTokens: 100, lines });
    expect(prefix.startsWith(`${TURN_PREFIX_NOTE}\n\n<transcript>`)).toBe(true);
    expect(prefix.endsWith(plain)).toBe(true);
    expect(plain).not.toContain(TURN_PREFIX_NOTE);
  });
});
