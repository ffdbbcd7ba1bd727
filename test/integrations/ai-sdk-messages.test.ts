/** memfold's messages and the AI SDK's, both ways: text, tool calls and results, memfold's notes, refusals. */
import { describe, expect, it } from 'vitest';
import { fromModelContent, fromModelMessages, toModelMessages } from '../../src/integrations/ai-sdk.js';
import { msg, toolCall } from '../support/messages.js';

describe('AI SDK messages', () => {
  const context = [
    msg('system', 'Be terse.'),
    msg('system', '[Context Summary] ...', { kind: 'clip_archive' }),
    msg('user', 'weather in Oslo?'),
    msg('assistant', '', { toolCalls: [toolCall('c1', 'weather', '{"city":"Oslo"}')] }),
    msg('tool', 'sunny', { toolCallId: 'c1' }),
    msg('assistant', 'It is sunny.'),
  ];

  it('gives the prompt the SDK takes, and reads it back as the messages it came from', () => {
    const prompt = toModelMessages(context);
    expect(prompt[1]).toEqual({ role: 'user', content: [{ type: 'text', text: '[Context Summary] ...' }] });
    expect(prompt[3]).toEqual({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Oslo' } }] });
    expect(prompt[4]).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'text', value: 'sunny' } }],
    });
    expect(toModelMessages(context, { memoryAs: 'system' })[1]).toEqual({ role: 'system', content: '[Context Summary] ...' });
    const back = fromModelMessages(prompt.slice(2));
    expect(back).toEqual([
      { role: 'user', content: 'weather in Oslo?' },
      { role: 'assistant', content: '', toolCalls: [toolCall('c1', 'weather', '{"city":"Oslo"}')] },
      { role: 'tool', content: 'sunny', toolCallId: 'c1' },
      { role: 'assistant', content: 'It is sunny.' },
    ]);
  });

  it('reads string contents, JSON and denied outputs, and a model answer; leaves reasoning out', () => {
    expect(
      fromModelMessages([
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'hm' },
            { type: 'text', text: 'yes' },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'a', toolName: 't', output: { type: 'json', value: { n: 1 } } },
            { type: 'tool-result', toolCallId: 'b', toolName: 't', output: { type: 'execution-denied', reason: 'no' } },
          ],
        },
      ]),
    ).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'yes' },
      { role: 'tool', content: '{"n":1}', toolCallId: 'a' },
      { role: 'tool', content: 'Execution denied: no', toolCallId: 'b' },
    ]);
    expect(
      fromModelContent([
        { type: 'text', text: 'ok ' },
        { type: 'tool-call', toolCallId: 'x', toolName: 'f', input: '{"a":1}' },
      ]),
    ).toEqual({
      role: 'assistant',
      content: 'ok ',
      toolCalls: [toolCall('x', 'f', '{"a":1}')],
    });
  });

  it('refuses what memfold cannot store, naming the field', () => {
    expect(() => fromModelMessages([{ role: 'user', content: [{ type: 'file', data: 'aGk=', mediaType: 'image/png' }] }])).toThrow(
      /messages\[0\]\.content\[0\]\.type/,
    );
    expect(() => fromModelContent([{ type: 'tool-call', toolCallId: 'x', toolName: 'web', input: '{}', providerExecuted: true }])).toThrow(
      /content\[0\]\.providerExecuted/,
    );
  });
});
