/**
 * The tools' definitions in each OpenAI API's shape, strict mode accepted by the openai package's own strict-schema
 * check, frozen; a strict call's nulls read as absent; and context() sent through the real openai client as Chat
 * Completions messages (the fake server records the body), or as Responses input items.
 */
import OpenAI from 'openai';
import { toStrictJsonSchema } from 'openai/lib/transform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemfold } from '../../src/memfold.js';
import { toChatMessages, toResponsesInput } from '../../src/openai/openai-messages.js';
import { MEMORY_READ_DEFINITION } from '../../src/tools/memory-read.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { orderChat, toolCall } from '../support/messages.js';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.setBehavior(behaviors.ok('noted'));
});
afterAll(() => fake.close());

async function open() {
  const memfold = await createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 2_000, continuationMessage: true } });
  await memfold.append('c', orderChat(20));
  await memfold.append('c', [
    { role: 'user', content: 'Look up ORD-503.' },
    { role: 'assistant', content: '', toolCalls: [toolCall('call_1', 'lookup_order', '{"id":"ORD-503"}')] },
    { role: 'tool', content: '{"status":"refunded"}', toolCallId: 'call_1' },
  ]);
  await memfold.compact('c', { force: true });
  return memfold;
}

describe('tool shapes', () => {
  it('strict definitions of both tools pass the openai package strict-schema check, for chat and responses', async () => {
    const memfold = await open();
    for (const tool of [memfold.memoryRead('c'), memfold.compactTool('c')]) {
      const chat = tool.definitionFor('chat', { strict: true });
      const responses = tool.definitionFor('responses', { strict: true });
      expect(chat).toMatchObject({ type: 'function', function: { name: tool.definition.function.name, strict: true } });
      expect(responses).toMatchObject({ type: 'function', name: tool.definition.function.name, strict: true });
      for (const parameters of [chat.function.parameters, responses.parameters]) {
        expect(() => toStrictJsonSchema(parameters as never)).not.toThrow();
        expect(parameters.required).toEqual(Object.keys(parameters.properties as object));
        expect(parameters.additionalProperties).toBe(false);
        expect(JSON.stringify(parameters)).not.toContain('"default"');
      }
      // Not strict: the definition as it is, in each shape.
      expect(tool.definitionFor('chat')).toEqual(tool.definition);
      expect(tool.definitionFor('responses')).toMatchObject({
        name: tool.definition.function.name,
        parameters: tool.definition.function.parameters,
        strict: false,
      });
    }
    // The schema as it was (optional properties, a default) is what strict mode refuses.
    expect(() => toStrictJsonSchema(MEMORY_READ_DEFINITION.function.parameters as never)).toThrow();
    await memfold.close();
  });

  it('hands out frozen definitions: no caller can change another one', async () => {
    const memfold = await open();
    const tool = memfold.memoryRead('c');
    expect(() => {
      (tool.definition.function as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    const strict = tool.definitionFor('chat', { strict: true });
    expect(() => {
      (strict.function.parameters as { required: string[] }).required.push('x');
    }).toThrow(TypeError);
    expect(MEMORY_READ_DEFINITION.function.name).toBe('memory_read');
    await memfold.close();
  });

  it('reads the nulls of a strict call as absent', async () => {
    const memfold = await open();
    const nulls = { label: null, depth: null, kind: null, from: null, to: null, limit: null, max_tokens: null };
    const read = await memfold.memoryRead('c').execute(JSON.stringify({ query: 'ORD-503', ...nulls }));
    expect(read.ok).toBe(true);
    expect(read.output).toContain('ORD-503');
    expect((await memfold.compactTool('c', { floorTokens: 100_000 }).execute({ focus: null })).output).toMatch(/^No compaction needed/);
    await memfold.close();
  });
});

describe('context() for the OpenAI APIs', () => {
  it('sends as Chat Completions messages through the openai client, with strict tools', async () => {
    const memfold = await open();
    const context = await memfold.context('c');
    const messages = toChatMessages(context);
    const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test-key', maxRetries: 0 });
    const from = fake.requests.length;
    await client.chat.completions.create({ model: 'assistant', messages, tools: [memfold.memoryRead('c').definitionFor('chat', { strict: true })] });
    const body = fake.requests[from]!.body;
    expect(body.tools[0].function).toMatchObject({ name: 'memory_read', strict: true });
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(context.map((m) => m.role));
    const call = body.messages.find((m: { tool_calls?: unknown[] }) => m.tool_calls);
    expect(call).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"id":"ORD-503"}' } }],
    });
    expect(body.messages.find((m: { role: string }) => m.role === 'tool')).toEqual({ role: 'tool', content: '{"status":"refunded"}', tool_call_id: 'call_1' });
    // The clip-archive and the continuation note, as user messages for SDKs that want one system message.
    const asUser = toChatMessages(context, { memoryAs: 'user' });
    expect(asUser.filter((m) => m.role === 'system')).toHaveLength(context.filter((m) => m.role === 'system' && m.kind === 'message').length);
    expect(context.some((m) => m.kind === 'clip_archive')).toBe(true);
    await memfold.close();
  });

  it('gives Responses API input items: messages, function calls and their outputs', async () => {
    const memfold = await open();
    const context = await memfold.context('c');
    const input = toResponsesInput(context);
    expect(input).toContainEqual({ type: 'function_call', call_id: 'call_1', name: 'lookup_order', arguments: '{"id":"ORD-503"}' });
    expect(input).toContainEqual({ type: 'function_call_output', call_id: 'call_1', output: '{"status":"refunded"}' });
    const clip = context.find((m) => m.kind === 'clip_archive')!;
    expect(input).toContainEqual({ type: 'message', role: 'system', content: clip.content });
    expect(toResponsesInput(context, { memoryAs: 'user' })).toContainEqual({ type: 'message', role: 'user', content: clip.content });
    // A call-only assistant turn is its function call alone.
    expect(input.filter((item) => 'role' in item && item.role === 'assistant' && item.content === '')).toEqual([]);
    await memfold.close();
  });
});
