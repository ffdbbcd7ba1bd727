/**
 * memfoldSummarizationMiddleware in LangChain's own agent loop (`createAgent`): messages archived instead of dropped,
 * the state replaced by memfold's context, compaction inside the loop, and the memory_read tool the middleware adds
 * called by the model, its answer holding the archived words.
 */
import { type AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromLangChainMessages, isMemfoldNote, memfoldSummarizationMiddleware, toLangChainMessages } from '../../src/integrations/langchain.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { msg, toolCall } from '../support/messages.js';
import { ScriptedChatModel } from './langchain-model.js';
import { ask } from './recipes/langchain-recipe.js';

const SMALL = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };
const filler = (t: number) => `Turn ${t}: tell me about topic-${t} and the number ${1000 + t}. ${'filler words here '.repeat(8)}`;

describe('memfoldSummarizationMiddleware (LangChain)', () => {
  let memfold: Memfold;
  beforeEach(async () => {
    memfold = await createMemfold({ store: 'memory', env: {}, compaction: SMALL });
  });
  afterEach(() => memfold.close());

  it('archives in the agent loop and answers with the memory_read tool it adds', async () => {
    const model = new ScriptedChatModel();
    await ask(memfold, model, 't1', 'Hello, I am Ada.');
    expect(await ask(memfold, model, 't1', 'Remember this: the storage locker code is 7351-heron.')).toContain('Noted');
    for (let t = 0; t < 25; t++) await ask(memfold, model, 't1', filler(t));
    const history = await memfold.history('t1');
    expect(history[0]).toMatchObject({ kind: 'clip_archive' });
    const contents = history.filter((m) => m.kind !== 'clip_archive').map((m) => m.content);
    expect(new Set(contents).size).toBe(contents.length);

    const before = model.calls.length;
    expect(await ask(memfold, model, 't1', 'What was the storage locker code?')).toBe('The locker code is 7351-heron.');
    const [asking, answering] = model.calls.slice(before);
    expect(model.calls.length - before).toBe(2);
    // The model saw memfold's context: its note first, and the fact's message archived, not in the state.
    expect(isMemfoldNote(asking![0]!)).toBe(true);
    expect(asking!.filter((m) => !isMemfoldNote(m)).some((m) => m.text.includes('7351-heron'))).toBe(false);
    const read = answering!.at(-1)!;
    expect(ToolMessage.isInstance(read) && read.tool_call_id).toBe((answering!.at(-2) as AIMessage).tool_calls?.[0]?.id);
    expect((read as ToolMessage).name).toBe('memory_read');
    expect((answering!.at(-2) as AIMessage).tool_calls?.[0]?.name).toBe('memory_read');
    expect(read.text).toContain('7351-heron');
    const stored = await memfold.history('t1');
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: 'The locker code is 7351-heron.' });
    expect(stored.at(-2)).toMatchObject({ role: 'tool', toolCallId: stored.at(-3)!.toolCalls![0]!.id });
  });

  it('compacts by the trigger summarizationMiddleware takes', async () => {
    const wide = await createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 8_000, keepRecentMessages: 4, keepRecentTokens: 400 } });
    try {
      const model = new ScriptedChatModel();
      const agent = createAgent({
        model,
        tools: [],
        middleware: [memfoldSummarizationMiddleware({ memfold: wide, conversationId: 'w', trigger: { messages: 12 } })],
      });
      for (let t = 0; t < 8; t++) await agent.invoke({ messages: [new HumanMessage(filler(t))] });
      const history = await wide.history('w');
      expect((await wide.usage('w')).tokens).toBeLessThan(wide.compactor.settings.trigger);
      expect(history[0]).toMatchObject({ kind: 'clip_archive' });
      expect(history.length).toBeLessThan(16);
    } finally {
      await wide.close();
    }
  });

  it("keeps the state's system messages first, never storing them", async () => {
    const model = new ScriptedChatModel();
    const agent = createAgent({ model, tools: [], middleware: [memfoldSummarizationMiddleware({ memfold, conversationId: 's' })] });
    await agent.invoke({ messages: [new SystemMessage('Be brief.'), new HumanMessage('hi')] });
    expect(model.calls[0]!.map((m) => [m.getType(), m.text])).toEqual([
      ['system', 'Be brief.'],
      ['human', 'hi'],
    ]);
    expect((await memfold.history('s')).map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('refuses keep (memfold keeps by its compaction settings) and a run with no conversation', async () => {
    expect(() => memfoldSummarizationMiddleware({ memfold, keep: { messages: 5 } } as never)).toThrow(/keep/);
    expect(() => memfoldSummarizationMiddleware({ memfold, trigger: { tokens: -1 } })).toThrow(/trigger\[0\]/);
    const agent = createAgent({ model: new ScriptedChatModel(), tools: [], middleware: [memfoldSummarizationMiddleware({ memfold })] });
    await expect(agent.invoke({ messages: [new HumanMessage('hi')] })).rejects.toThrow(/conversationId/);
  });

  it('converts messages both ways, tool calls included, and leaves memfold notes and system messages out', () => {
    const context = [
      msg('system', '[Context Summary] ...', { kind: 'clip_archive' }),
      msg('user', 'weather?'),
      msg('assistant', '', { toolCalls: [toolCall('c1', 'weather', '{"city":"Oslo"}')] }),
      msg('tool', 'sunny', { toolCallId: 'c1' }),
    ];
    const state = toLangChainMessages(context);
    expect(HumanMessage.isInstance(state[0]) && isMemfoldNote(state[0]!)).toBe(true);
    expect((state[3] as ToolMessage).name).toBe('weather');
    expect((state[2] as AIMessage).tool_calls).toEqual([{ id: 'c1', name: 'weather', args: { city: 'Oslo' }, type: 'tool_call' }]);
    expect(fromLangChainMessages(state)).toEqual([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '', toolCalls: [toolCall('c1', 'weather', '{"city":"Oslo"}')] },
      { role: 'tool', content: 'sunny', toolCallId: 'c1' },
    ]);
    const image = new HumanMessage({ content: [{ type: 'image_url', image_url: 'data:image/png;base64,aGk=' }] });
    expect(() => fromLangChainMessages([image])).toThrow(/messages\[0\]\.content\[0\]\.type/);
  });
});
