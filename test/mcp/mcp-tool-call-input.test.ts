/**
 * A `tools/call` whose params the MCP schema refuses (arguments as a string, a name that is not one) is answered as
 * a tool result with `isError`, naming what is wrong, as every other bad call is: never a JSON-RPC error. Raw
 * messages go through the SDK's in-memory transport, since its Client would not send them.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { expect, it } from 'vitest';
import { mcpScope } from '../../src/mcp/mcp-scope.js';
import { createMcpServer } from '../../src/mcp/mcp-server.js';
import type { McpBackend } from '../../src/mcp/mcp-tools.js';

const calls: unknown[] = [];
const backend: McpBackend = {
  memoryRead: () => ({
    execute: async (args) => {
      calls.push(args);
      return { ok: true, output: `read ${JSON.stringify(args)}` };
    },
  }),
};

async function call(params: unknown): Promise<Record<string, unknown>> {
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer({ scope: mcpScope({ conversation: 'c' }), access: 'archive', backend: async () => backend, version: '0.0.0' });
  await server.connect(serverSide);
  const answered = new Promise<Record<string, unknown>>((resolve) => {
    client.onmessage = (message: JSONRPCMessage) => resolve(message as Record<string, unknown>);
  });
  await client.start();
  await client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params } as JSONRPCMessage);
  const answer = await answered;
  await server.close();
  return answer;
}

const textOf = (answer: Record<string, unknown>) => (answer.result as { content: Array<{ text: string }> }).content[0]!.text;

it('answers arguments sent as a string that is not a JSON object as a tool error naming `arguments`', async () => {
  const answer = await call({ name: 'memory_read', arguments: 'where is my order' });
  expect(answer.error).toBeUndefined();
  expect(answer.result).toMatchObject({ isError: true });
  expect(textOf(answer)).toMatch(/^Invalid argument arguments: must be a JSON object$/);
});

it('reads arguments sent as the JSON text of an object, as OpenAI-style clients send them', async () => {
  const answer = await call({ name: 'memory_read', arguments: '{"query":"ORD-1"}' });
  expect(answer.result).toMatchObject({ isError: false });
  expect(calls.at(-1)).toEqual({ query: 'ORD-1' });
});

it('runs a call that leaves out `arguments` (optional in MCP) with no arguments', async () => {
  const answer = await call({ name: 'memory_read' });
  expect(answer.error).toBeUndefined();
  expect(answer.result).toMatchObject({ isError: false });
  expect(calls.at(-1)).toEqual({});
});

it('answers a tool name that is not a string, a call without a name or without params, as an unknown tool', async () => {
  for (const params of [{ name: 42, arguments: {} }, { arguments: {} }, {}, undefined]) {
    const answer = await call(params);
    expect(answer.error).toBeUndefined();
    expect(answer.result).toMatchObject({ isError: true });
    expect(textOf(answer)).toMatch(/^Unknown tool/);
  }
});
