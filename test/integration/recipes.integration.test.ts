/**
 * The documentation's integration recipes (docs/library.md), run as written: memory_read wired into the AI SDK (a mock
 * language model that calls it; memfold's context converted to its messages, tool calls and a missing system prompt
 * included), LangChain (`DynamicStructuredTool` + `invoke`), the openai client (a full tool loop against the local fake server,
 * strict tools, every turn stored with fromChatMessage), and an MCP server the owning process serves over HTTP. Each checks that the archived words reach
 * what the model reads next.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DynamicStructuredTool } from '@langchain/core/tools';
import type { JSONSchema } from '@langchain/core/utils/json_schema';
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConversationMessage, createMemfold, fromChatMessage, mcpServerFor, serveMcpHttp, toChatMessages, type Memfold } from '../../src/index.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { orderChat } from '../support/messages.js';

let memfold: Memfold;
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  memfold = await createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 2_000 } });
  await memfold.append('c', [{ role: 'system', content: 'You are a helpful order assistant.' }, ...orderChat(30)]);
  expect((await memfold.compact('c', { force: true })).status).toBe('compacted');
});
afterAll(async () => {
  await memfold.close();
  await fake.close();
});

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

// Recipe, as written (docs/library.md, Integrations).
function toModelMessages(context: ConversationMessage[]): { system?: string; messages: ModelMessage[] } {
  const system: string[] = [];
  const messages: ModelMessage[] = [];
  const toolNames = new Map<string, string>(); // a tool result names its tool: the call's, by id
  for (const m of context) {
    const note = m.kind === 'clip_archive' || m.kind === 'continuation';
    if (m.role === 'system' && !note) system.push(m.content);
    else if (m.role === 'system' || m.role === 'user') messages.push({ role: 'user', content: m.content });
    else if (m.role === 'assistant') {
      const calls = (m.toolCalls ?? []).map((call) => {
        toolNames.set(call.id, call.function.name);
        return { type: 'tool-call' as const, toolCallId: call.id, toolName: call.function.name, input: JSON.parse(call.function.arguments) as unknown };
      });
      messages.push({ role: 'assistant', content: [...(m.content === '' ? [] : [{ type: 'text' as const, text: m.content }]), ...calls] });
    } else {
      const toolCallId = m.toolCallId ?? '';
      const toolName = toolNames.get(toolCallId) ?? 'unknown';
      messages.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName, output: { type: 'text', value: m.content } }] });
    }
  }
  return system.length === 0 ? { messages } : { system: system.join('\n\n'), messages };
}

/** The AI SDK recipe's call, as written, on `conversationId`. */
async function aiSdkRecipe(model: MockLanguageModelV4, conversationId: string): Promise<string> {
  const memory = memfold.memoryRead(conversationId);
  const { text } = await generateText({
    model,
    ...toModelMessages(await memfold.context(conversationId)),
    stopWhen: stepCountIs(5),
    tools: {
      memory_read: tool({
        description: memory.definition.function.description,
        inputSchema: jsonSchema(memory.definition.function.parameters),
        execute: async (args) => (await memory.execute(args)).output,
      }),
    },
  });
  return text;
}

const answer = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] });

it('AI SDK: generateText runs memory_read for the model, the system prompt as `system`, the clip-archive as a user message', async () => {
  const model = new MockLanguageModelV4({
    doGenerate: [
      {
        content: [{ type: 'tool-call', toolCallId: 't1', toolName: 'memory_read', input: JSON.stringify({ query: 'ORD-502' }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      },
      answer('ORD-502 is noted.'),
    ],
  });
  expect(await aiSdkRecipe(model, 'c')).toBe('ORD-502 is noted.');
  const first = model.doGenerateCalls[0]!.prompt;
  expect(first[0]).toMatchObject({ role: 'system', content: 'You are a helpful order assistant.' });
  expect(first.slice(1).map((m) => m.role)).not.toContain('system');
  const secondPrompt = JSON.stringify(model.doGenerateCalls[1]!.prompt);
  expect(secondPrompt).toContain('tool-result');
  expect(secondPrompt).toContain('Please remember order ORD-502');
});

it('AI SDK: a conversation with no system prompt and tool calls in its history is sent whole, calls and results as parts', async () => {
  await memfold.append('ai-tools', [
    { role: 'user', content: 'Where is ORD-77?' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'k1', type: 'function', function: { name: 'memory_read', arguments: '{"query":"ORD-77"}' } }] },
    { role: 'tool', toolCallId: 'k1', content: 'ORD-77 shipped on Monday.' },
    { role: 'assistant', content: 'It shipped on Monday.' },
    { role: 'user', content: 'When does it arrive?' },
  ]);
  const model = new MockLanguageModelV4({ doGenerate: [answer('On Thursday.')] });
  expect(await aiSdkRecipe(model, 'ai-tools')).toBe('On Thursday.');
  const prompt = model.doGenerateCalls[0]!.prompt;
  expect(prompt.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
  expect(prompt[0]).toMatchObject({ content: [{ type: 'text', text: 'Where is ORD-77?' }] });
  expect(prompt[1]).toMatchObject({ content: [{ type: 'tool-call', toolCallId: 'k1', toolName: 'memory_read', input: { query: 'ORD-77' } }] });
  expect(prompt[2]).toMatchObject({ content: [{ type: 'tool-result', toolCallId: 'k1', toolName: 'memory_read' }] });
  expect(JSON.stringify(prompt[2])).toContain('ORD-77 shipped on Monday.');
});

it('LangChain: a DynamicStructuredTool wraps memory_read, and invoke answers from the archive', async () => {
  const conversationId = 'c';
  const memory = memfold.memoryRead(conversationId);
  // The class, not tool(): with a JSON schema, tool()'s overloads type invoke() as a union TypeScript cannot call.
  const memoryTool = new DynamicStructuredTool({
    name: 'memory_read',
    description: memory.definition.function.description,
    // LangChain writes into the schema it is given, and memfold's definitions are frozen: give it a copy.
    schema: structuredClone(memory.definition.function.parameters) as JSONSchema,
    func: async (args: Record<string, unknown>) => (await memory.execute(args)).output,
  });
  const answer = await memoryTool.invoke({ query: 'ORD-504' });
  expect(answer).toContain('Please remember order ORD-504');
});

it('openai client: a strict tool loop, the model calling memory_read and reading its answer', async () => {
  const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0 });
  fake.enqueue(
    behaviors.toolCall('memory_read', { query: 'ORD-506', label: null, depth: null, kind: null, from: null, to: null, limit: null, max_tokens: null }),
  );
  fake.enqueue(behaviors.ok('ORD-506 was noted for Ada Lovelace.'));
  const conversationId = 'c';
  const openai = client;
  const before = (await memfold.history(conversationId)).length;
  // Recipe, as written:
  const memory = memfold.memoryRead(conversationId);
  const tools = [memory.definitionFor('chat', { strict: true })];
  for (;;) {
    const messages = toChatMessages(await memfold.context(conversationId));
    const reply = (await openai.chat.completions.create({ model: 'gpt-4.1', messages, tools })).choices[0]!.message;
    const [stored] = await memfold.append(conversationId, fromChatMessage(reply)); // the reply, stored in one line
    if (!stored?.toolCalls?.length) break;
    for (const call of stored.toolCalls) {
      const { output } = await memory.execute(call.function.arguments);
      await memfold.append(conversationId, [{ role: 'tool', toolCallId: call.id, content: output }]);
    }
  }
  // The call (content null), its result and the answer are stored, in order.
  const added = (await memfold.history(conversationId)).slice(before);
  expect(added.map((m) => [m.role, m.content === '' ? '' : m.content.slice(0, 40), m.toolCalls?.[0]?.function.name])).toEqual([
    ['assistant', '', 'memory_read'],
    ['tool', expect.any(String), undefined],
    ['assistant', 'ORD-506 was noted for Ada Lovelace.', undefined],
  ]);
  expect(added[1]!.toolCallId).toBe(added[0]!.toolCalls![0]!.id);
  const lastRequest = fake.requests.at(-1)!.body;
  expect(lastRequest.tools[0].function.strict).toBe(true);
  expect(JSON.stringify(lastRequest.messages.at(-1))).toContain('Please remember order ORD-506');
});

it('MCP: the owning process serves memory_read over HTTP', async () => {
  const listener = await serveMcpHttp({ server: () => mcpServerFor(memfold, { conversation: 'c' }) });
  const client = new Client({ name: 'recipe', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(listener.url)));
    const result = await client.callTool({ name: 'memory_read', arguments: { query: 'ORD-508' } });
    expect(JSON.stringify(result.content)).toContain('Please remember order ORD-508');
  } finally {
    await client.close();
    await listener.close();
  }
});
