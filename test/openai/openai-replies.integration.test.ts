/**
 * What the openai SDK hands back, stored in one line and read back as it came: a Chat Completions reply with
 * `content: null` and `tool_calls` (from the real client against the fake server), and a Responses output (message,
 * function calls, their outputs), each appended to a real in-memory memfold and read back through context() and the
 * inverse conversion. Refusals kept as text, reasoning left out, what memfold cannot store refused naming the field,
 * and `append` refusing the SDK's shapes with a pointer to the converters.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemfold, fromChatMessage, fromResponsesOutput, toChatMessages, toResponsesInput, type Memfold } from '../../src/index.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';

let fake: FakeOpenAI;
let memfold: Memfold;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  memfold = await createMemfold({ store: 'memory', env: {} });
});
afterAll(async () => {
  await memfold.close();
  await fake.close();
});

describe('Chat Completions', () => {
  it('stores a reply with content null and tool_calls in one line, and context() gives it back as it came', async () => {
    const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0 });
    fake.enqueue(behaviors.toolCall('lookup_order', { id: 'ORD-503' }));
    const question: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: 'Where is ORD-503?', name: 'ada' };
    await memfold.append('chat', fromChatMessage(question));
    const reply = (await client.chat.completions.create({ model: 'gpt-4.1', messages: [question] })).choices[0]!.message;
    expect(reply.content).toBeNull();
    expect(reply.tool_calls).toHaveLength(1);

    await memfold.append('chat', fromChatMessage(reply));
    const call = reply.tool_calls![0]!;
    const result: OpenAI.Chat.ChatCompletionToolMessageParam = { role: 'tool', tool_call_id: call.id, content: '{"status":"shipped"}' };
    await memfold.append('chat', fromChatMessage(result));

    const stored = await memfold.context('chat');
    expect(stored[1]).toMatchObject({ role: 'assistant', content: '', toolCalls: reply.tool_calls });
    expect(toChatMessages(stored)).toEqual([question, { role: 'assistant', content: null, tool_calls: reply.tool_calls }, result]);
  });

  it('keeps a refusal as what the assistant said, developer as system, text parts joined', () => {
    const refusal: OpenAI.Chat.ChatCompletionMessage = { role: 'assistant', content: null, refusal: 'I cannot help with that.' };
    expect(fromChatMessage(refusal)).toEqual([{ role: 'assistant', content: 'I cannot help with that.' }]);
    expect(fromChatMessage({ role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] })).toEqual([{ role: 'system', content: 'Be brief.' }]);
    expect(
      fromChatMessage({
        role: 'user',
        content: [
          { type: 'text', text: 'one ' },
          { type: 'text', text: 'two' },
        ],
      }),
    ).toEqual([{ role: 'user', content: 'one two' }]);
  });

  it('refuses what memfold cannot store, naming the field', () => {
    const custom: OpenAI.Chat.ChatCompletionMessage = {
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'sql', input: 'select 1' } }],
    };
    expect(() => fromChatMessage(custom)).toThrow(/message\.tool_calls\[0\]\.type: is "custom": memfold stores function tool calls only/);
    const image: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] };
    expect(() => fromChatMessage(image)).toThrow(/message\.content\[0\]\.type: is "image_url"/);
    expect(() => fromChatMessage({ role: 'function', name: 'f', content: '1' })).toThrow(/message\.role: is "function"/);
  });

  it('append refuses the SDK shape (content null, tool_calls) naming the field and the converter, storing nothing', async () => {
    const reply = { role: 'assistant', content: null, tool_calls: [{ id: 'c9', type: 'function', function: { name: 'f', arguments: '{}' } }] };
    await expect(memfold.append('sdk', [reply as never])).rejects.toMatchObject({
      field: 'messages[0].content',
      message: expect.stringContaining('fromChatMessage'),
    });
    // With text, the snake_case calls would have been ignored: the turn stored without them.
    await expect(memfold.append('sdk', [{ ...reply, content: 'Looking.' } as never])).rejects.toMatchObject({
      field: 'messages[0].tool_calls',
      message: expect.stringContaining("is the openai SDK's spelling; memfold takes toolCalls"),
    });
    await expect(memfold.append('sdk', [{ role: 'tool', content: '1', tool_call_id: 'c9' } as never])).rejects.toMatchObject({
      field: 'messages[0].tool_call_id',
    });
    expect(await memfold.history('sdk')).toEqual([]);
  });
});

describe('Responses', () => {
  const output: OpenAI.Responses.ResponseOutputItem[] = [
    { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Look both orders up.' }] },
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [
        { type: 'output_text', text: 'Checking ', annotations: [] },
        { type: 'output_text', text: 'both orders.', annotations: [] },
      ],
    },
    { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'lookup_order', arguments: '{"id":"ORD-503"}', status: 'completed' },
    { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'lookup_order', arguments: '{"id":"ORD-504"}', status: 'completed' },
  ];
  const outputs: OpenAI.Responses.ResponseInputItem[] = [
    { type: 'function_call_output', call_id: 'call_a', output: '{"status":"shipped"}' },
    { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: '{"status":"refunded"}' }] },
  ];

  it('stores message + function_call + function_call_output items, and context() gives them back as they came', async () => {
    await memfold.append('responses', fromResponsesOutput([{ role: 'user', content: 'Check ORD-503 and ORD-504.' }]));
    await memfold.append('responses', fromResponsesOutput(output));
    await memfold.append('responses', fromResponsesOutput(outputs));

    const stored = await memfold.context('responses');
    expect(stored.map((m) => [m.role, m.content, m.toolCalls?.map((c) => c.id), m.toolCallId])).toEqual([
      ['user', 'Check ORD-503 and ORD-504.', undefined, undefined],
      ['assistant', 'Checking both orders.', ['call_a', 'call_b'], undefined],
      ['tool', '{"status":"shipped"}', undefined, 'call_a'],
      ['tool', '{"status":"refunded"}', undefined, 'call_b'],
    ]);
    expect(toResponsesInput(stored)).toEqual([
      { type: 'message', role: 'user', content: 'Check ORD-503 and ORD-504.' },
      { type: 'message', role: 'assistant', content: 'Checking both orders.' },
      ...output
        .slice(2)
        .map((item) => item.type === 'function_call' && { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments }),
      { type: 'function_call_output', call_id: 'call_a', output: '{"status":"shipped"}' },
      { type: 'function_call_output', call_id: 'call_b', output: '{"status":"refunded"}' },
    ]);
    // Round trip: the items read back convert to the same messages.
    expect(fromResponsesOutput(toResponsesInput(stored))).toEqual([
      ...fromResponsesOutput([{ role: 'user', content: 'Check ORD-503 and ORD-504.' }]),
      ...fromResponsesOutput(output),
      ...fromResponsesOutput(outputs),
    ]);
  });

  it('starts an assistant message of calls only when no message comes before them; keeps a refusal; leaves reasoning out', () => {
    expect(fromResponsesOutput([output[0]!, output[2]!])).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_a', type: 'function', function: { name: 'lookup_order', arguments: '{"id":"ORD-503"}' } }] },
    ]);
    const refused: OpenAI.Responses.ResponseOutputItem = {
      type: 'message',
      id: 'msg_2',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'refusal', refusal: 'I cannot help with that.' }],
    };
    expect(fromResponsesOutput([refused])).toEqual([{ role: 'assistant', content: 'I cannot help with that.' }]);
    expect(fromResponsesOutput([output[0]!])).toEqual([]);
  });

  it('refuses other items and an output without its call id, naming output[i]', () => {
    const search: OpenAI.Responses.ResponseOutputItem = { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } };
    expect(() => fromResponsesOutput([output[1]!, search])).toThrow(/output\[1\]\.type: is "web_search_call"/);
    expect(() => fromResponsesOutput([{ type: 'function_call_output', output: 'x' }])).toThrow(/output\[0\]\.call_id: is required/);
    expect(() => fromResponsesOutput([{ role: 'user', content: [{ type: 'input_image', detail: 'auto', image_url: 'https://x/y.png' }] }])).toThrow(
      /output\[0\]\.content\[0\]\.type: is "input_image"/,
    );
  });
});
