/**
 * memfoldMiddleware in the AI SDK's own loop (`generateText`, `streamText` over `wrapLanguageModel`): each call's new
 * messages and answer stored once, compaction inside the loop, the context sent instead of the history, and
 * memory_read run by the middleware with the archived words reaching the model's next call.
 */
import { generateText, jsonSchema, type ModelMessage, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memfoldMiddleware } from '../../src/integrations/ai-sdk.js';
import type { PromptMessage } from '../../src/integrations/ai-sdk-types.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { callAnswer, scripted, scriptedModel, streamingModel, textAnswer, textOf, usage } from './ai-sdk-model.js';
import { reply } from './recipes/ai-sdk-recipe.js';

const SMALL = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };
const filler = (t: number) => `Turn ${t}: tell me about topic-${t} and the number ${1000 + t}. ${'filler words here '.repeat(8)}`;
const LOCKER = 'Remember this: the storage locker code is 7351-heron.';
const promptText = (prompt: readonly PromptMessage[]) => prompt.map(textOf).join('\n');

describe('memfoldMiddleware (AI SDK)', () => {
  let memfold: Memfold;
  beforeEach(async () => {
    memfold = await createMemfold({ store: 'memory', env: {}, compaction: SMALL });
  });
  afterEach(() => memfold.close());

  it('compacts inside the loop and answers from the archive with memory_read, the app registering nothing', async () => {
    const model = scriptedModel();
    // memfold keeps a conversation's opening turn live: the fact comes second.
    await reply(memfold, model, 'c1', 'Hello, I am Ada.');
    expect(await reply(memfold, model, 'c1', LOCKER)).toContain('Noted');
    for (let t = 0; t < 25; t++) await reply(memfold, model, 'c1', filler(t));
    const history = await memfold.history('c1');
    expect(history[0]).toMatchObject({ kind: 'clip_archive' });
    // Every turn stored once, in order: no message twice.
    const contents = history.filter((m) => m.kind !== 'clip_archive').map((m) => m.content);
    expect(new Set(contents).size).toBe(contents.length);

    const calls = model.doGenerateCalls.length;
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: memfoldMiddleware({ memfold, conversationId: 'c1' }) }),
      system: 'You are a concise assistant.',
      prompt: 'What was the storage locker code?',
    });
    expect(result.text).toBe('The locker code is 7351-heron.');
    // The SDK saw one step and no tool call: the middleware ran memory_read itself.
    expect(result.steps).toHaveLength(1);
    expect(result.toolCalls).toEqual([]);
    const [asking, answering] = model.doGenerateCalls.slice(calls);
    expect(model.doGenerateCalls.length - calls).toBe(2);
    expect(asking!.tools?.map((t) => t.name)).toEqual(['memory_read']);
    expect(asking!.prompt[0]).toEqual({ role: 'system', content: 'You are a concise assistant.' });
    // The first call was built from the compacted context: the fact's message is archived (the clip-archive, sent as a
    // user note, may summarize it), no longer a message of the prompt.
    const notes = asking!.prompt.filter((m) => textOf(m).startsWith('[Context Summary'));
    expect(notes).toHaveLength(1);
    expect(notes[0]!.role).toBe('user');
    expect(promptText(asking!.prompt.filter((m) => !notes.includes(m)))).not.toContain('7351-heron');
    expect(asking!.prompt.length).toBeLessThan(20);
    // The second call carries memory_read's answer, holding the archived words.
    expect(answering!.prompt.at(-1)).toMatchObject({ role: 'tool', content: [{ type: 'tool-result', toolName: 'memory_read' }] });
    expect(textOf(answering!.prompt.at(-1))).toContain('7351-heron');
    const stored = await memfold.history('c1');
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: 'The locker code is 7351-heron.' });
    expect(stored.at(-3)).toMatchObject({ role: 'assistant', toolCalls: [{ function: { name: 'memory_read' } }] });
  });

  it('leaves compaction to the background job when memfold compacts in the background', async () => {
    const background = await createMemfold({ store: 'memory', env: {}, compaction: { ...SMALL, background: true } });
    try {
      const compactCalls: string[] = [];
      const compact = (id: string) => {
        compactCalls.push(id);
        return background.compact(id);
      };
      const host = { ...background, compact: compact as Memfold['compact'] };
      const model = scriptedModel();
      for (let t = 0; t < 25; t++) await reply(host, model, 'bg', filler(t));
      expect(compactCalls).toEqual([]);
      await expect.poll(async () => (await background.history('bg'))[0]?.kind, { timeout: 20_000 }).toBe('clip_archive');
    } finally {
      await background.close();
    }
  });

  it('stores only what is new when the app sends the whole history each time, app tool calls and results included', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async ({ prompt }) => {
        const last = prompt.at(-1);
        if (last?.role === 'user' && textOf(last).includes('weather')) return callAnswer('weather', { city: 'Oslo' }, `w-${prompt.length}`);
        return textAnswer(last?.role === 'tool' ? `It is ${textOf(last)}.` : `Noted: ${textOf(last)}`);
      },
    });
    const assistant = wrapLanguageModel({ model, middleware: memfoldMiddleware({ memfold, conversationId: 'full' }) });
    const weather = tool({
      inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } } }),
      execute: async () => 'sunny',
    });
    const messages: ModelMessage[] = [];
    for (const text of ['hello', 'what is the weather?', 'thanks', 'hello']) {
      messages.push({ role: 'user', content: text });
      const result = await generateText({ model: assistant, messages, tools: { weather }, stopWhen: stepCountIs(3) });
      messages.push(...result.response.messages);
    }
    const history = await memfold.history('full');
    expect(history.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'Noted: hello'],
      ['user', 'what is the weather?'],
      ['assistant', ''],
      ['tool', 'sunny'],
      ['assistant', 'It is sunny.'],
      ['user', 'thanks'],
      ['assistant', 'Noted: thanks'],
      ['user', 'hello'],
      ['assistant', 'Noted: hello'],
    ]);
    expect(history[3]!.toolCalls?.[0]).toMatchObject({ function: { name: 'weather', arguments: '{"city":"Oslo"}' } });
  });

  it('streams the answer through streamText, running memory_read between two model calls of one step', async () => {
    const model = streamingModel();
    const assistant = wrapLanguageModel({ model, middleware: memfoldMiddleware({ memfold, conversationId: 's1' }) });
    const say = async (prompt: string) => await streamText({ model: assistant, prompt }).text;
    await say('Hello, I am Ada.');
    expect(await say(LOCKER)).toContain('Noted');
    for (let t = 0; t < 25; t++) await say(filler(t));
    expect((await memfold.history('s1'))[0]).toMatchObject({ kind: 'clip_archive' });
    const result = streamText({ model: assistant, prompt: 'What was the storage locker code?' });
    expect(await result.text).toBe('The locker code is 7351-heron.');
    expect(await result.toolCalls).toEqual([]);
    expect(model.doStreamCalls.at(-1)!.prompt.at(-1)).toMatchObject({ role: 'tool' });
    expect(textOf(model.doStreamCalls.at(-1)!.prompt.at(-1))).toContain('7351-heron');
  });

  it('answers memory_read and hands the app its own calls when the model makes both in one answer', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async ({ prompt }) => {
        if (prompt.at(-1)?.role === 'tool') return textAnswer(`Done: ${textOf(prompt.at(-1))}`);
        const both = { ...callAnswer('weather', { city: 'Oslo' }, 'w1') };
        return { ...both, content: [...callAnswer('memory_read', { query: 'Oslo' }, 'r1').content, ...both.content] };
      },
    });
    const weather = tool({
      inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } } }),
      execute: async () => 'sunny',
    });
    const assistant = wrapLanguageModel({ model, middleware: memfoldMiddleware({ memfold, conversationId: 'mixed' }) });
    const result = await generateText({ model: assistant, prompt: 'weather?', tools: { weather }, stopWhen: stepCountIs(3) });
    expect(result.steps[0]!.toolCalls.map((call) => call.toolName)).toEqual(['weather']);
    expect(result.text).toBe('Done: sunny');
    const history = await memfold.history('mixed');
    expect(history.map((m) => [m.role, m.toolCallId ?? m.toolCalls?.map((c) => c.id).join(',') ?? m.content])).toEqual([
      ['user', 'weather?'],
      ['assistant', 'r1,w1'],
      ['tool', 'r1'],
      ['tool', 'w1'],
      ['assistant', 'Done: sunny'],
    ]);
  });

  it('stops the model stream when the app stops reading, storing what was said', async () => {
    const model = streamingModel();
    const assistant = wrapLanguageModel({ model, middleware: memfoldMiddleware({ memfold, conversationId: 'cancel' }) });
    const { stream } = await assistant.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }] });
    const reader = stream.getReader();
    while ((await reader.read()).value?.type !== 'text-delta');
    await reader.cancel('enough');
    await expect.poll(async () => (await memfold.history('cancel')).map((m) => m.role), { timeout: 20_000 }).toEqual(['user', 'assistant']);
  });

  it('stores a message handed over by two calls at once once', async () => {
    const assistant = wrapLanguageModel({ model: scriptedModel(), middleware: memfoldMiddleware({ memfold, conversationId: 'twice' }) });
    const messages: ModelMessage[] = [{ role: 'user', content: 'hello' }];
    await Promise.all([generateText({ model: assistant, messages }), generateText({ model: assistant, messages })]);
    expect((await memfold.history('twice')).filter((m) => m.role === 'user')).toHaveLength(1);
  });

  it('asks for an answer without memory_read after maxMemoryReads rounds', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async ({ tools }) =>
        tools?.some((t) => t.name === 'memory_read') ? callAnswer('memory_read', { query: 'x' }, `r-${Math.random()}`) : textAnswer('done'),
    });
    const assistant = wrapLanguageModel({ model, middleware: memfoldMiddleware({ memfold, conversationId: 'loop', maxMemoryReads: 2 }) });
    const result = await generateText({ model: assistant, prompt: 'go' });
    expect(result.text).toBe('done');
    expect(model.doGenerateCalls).toHaveLength(3);
    expect(model.doGenerateCalls[2]!.tools ?? []).toEqual([]);
  });

  it('calibrates memfold with the usage the model reports', async () => {
    const model = new MockLanguageModelV4({ doGenerate: async ({ prompt }) => ({ ...scripted(prompt), usage: usage(400) }) });
    await reply(memfold, model, 'cal', 'hello there');
    expect((await memfold.usage('cal')).calibration).toBeGreaterThan(1);
  });

  it('refuses a prompt part memfold cannot store, naming it', async () => {
    const assistant = wrapLanguageModel({ model: scriptedModel(), middleware: memfoldMiddleware({ memfold, conversationId: 'f' }) });
    const image = { type: 'file' as const, data: new Uint8Array([1]), mediaType: 'image/png' };
    await expect(generateText({ model: assistant, messages: [{ role: 'user', content: [image] }] })).rejects.toThrow(/messages\[0\]\.content\[0\]\.type/);
    expect(() => memfoldMiddleware({ memfold, conversationId: '' })).toThrow(/conversationId/);
  });
});
