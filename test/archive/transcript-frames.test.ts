/**
 * Format 2 of a transcript (`transcript-frames.ts`): the messages rebuilt from frames and content are the messages
 * as appended, byte for byte in JSON, whatever the content says; and a text the content holds is not stored again.
 */
import { describe, expect, it } from 'vitest';
import { framesJson, messagesFromFrames } from '../../src/archive/transcript-frames.js';
import { transcript } from './archive-fixtures.js';
import { renderedTranscript, shapes } from './transcript-shapes.js';

describe('transcript frames', () => {
  const messages = shapes('c');

  it.each([
    ['rendered as compaction renders it', renderedTranscript('c', 't', messages).content],
    ['rendered otherwise (one line per message, no indent)', transcript('c', 't', messages).content],
    ['unrelated to the messages', 'nothing of the messages is here'],
    ['empty', ''],
  ])('rebuild every message exactly against content %s', (_, content) => {
    const frames = framesJson(content, messages, 'c');
    const rebuilt = messagesFromFrames(content, frames, 'c');
    expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(messages));
    expect(rebuilt).toEqual(messages);
  });

  it('rebuild every message exactly for another conversation id', () => {
    const { content } = renderedTranscript('c', 't', messages);
    expect(JSON.stringify(messagesFromFrames(content, framesJson(content, messages, 'x'), 'x'))).toBe(JSON.stringify(messages));
  });

  it('store no text the rendered content holds: frames are a small part of the messages', () => {
    const { content } = renderedTranscript('c', 't', messages);
    const frames = framesJson(content, messages, 'c');
    expect(frames).not.toContain('a long line of words');
    expect(frames).not.toContain('support group');
    expect(frames).not.toContain('search_flights\\",');
    expect(frames).not.toContain('"from\\":\\"SFO');
    expect(frames.length).toBeLessThan(JSON.stringify(messages).length / 50);
  });

  it('keep what the content cannot give back: a lone surrogate, non-string content, short text', () => {
    const { content } = renderedTranscript('c', 't', messages);
    const frames = framesJson(content, messages, 'c');
    expect(frames).toContain('\\ud83d');
    expect(frames).toContain('parts, not a string');
    expect(frames).toContain('"short"');
  });

  it('refuse damaged frames instead of returning wrong text', () => {
    const content = 'a transcript line long enough to reference';
    const frames = framesJson(content, [{ id: 'm', conversationId: 'c', seq: 1, role: 'user', content, createdAt: '2024-05-01T10:00:00.000Z' }], 'c');
    expect(() => messagesFromFrames(content.slice(0, 10), frames, 'c')).toThrow(/damaged/);
    expect(() => messagesFromFrames(content, '{}', 'c')).toThrow(/damaged/);
    expect(() => messagesFromFrames(content, '[[["content"]],[0,"r",[-1,3]]]', 'c')).toThrow(/damaged/);
    expect(() => messagesFromFrames(content, '[[["content"]],[1,"r",[0,3]]]', 'c')).toThrow(/damaged/);
  });
});
