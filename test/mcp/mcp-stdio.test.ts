/**
 * The stdio transport of `memfold mcp`, in this process over stream pairs, with the real MCP server in front of a
 * recording backend: a line over the limit is answered with a JSON-RPC error and skipped, and the server keeps
 * answering; a line that is not JSON or not JSON-RPC is answered too; a request in flight when the input ends is
 * answered before the transport reports it drained, and the wait is bounded.
 */
import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import { mcpScope } from '../../src/mcp/mcp-scope.js';
import { createMcpServer } from '../../src/mcp/mcp-server.js';
import { createStdioTransport } from '../../src/mcp/mcp-stdio.js';
import type { McpBackend } from '../../src/mcp/mcp-tools.js';

interface Reply {
  id: string | number | null;
  result?: { content?: Array<{ text: string }>; isError?: boolean; tools?: unknown[] };
  error?: { code: number; message: string };
}

/** A server on a transport over in-memory streams; `replies()` waits for the number of lines asked. */
async function serve(backend: McpBackend, maxLineBytes?: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: Reply[] = [];
  let buffered = '';
  const waiters: Array<() => void> = [];
  output.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline = buffered.indexOf('\n');
    while (newline !== -1) {
      lines.push(JSON.parse(buffered.slice(0, newline)) as Reply);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
    for (const wake of waiters.splice(0)) wake();
  });
  const transport = createStdioTransport({ input, output, ...(maxLineBytes !== undefined ? { maxLineBytes } : {}) });
  const server = createMcpServer({ scope: mcpScope({ conversation: 'c' }), access: 'archive', backend: async () => backend, version: '0.0.0' });
  await server.connect(transport);
  const send = (message: object) => input.write(`${JSON.stringify(message)}\n`);
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const replies = async (count: number): Promise<Reply[]> => {
    while (lines.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    return lines.slice(1, count);
  };
  await replies(1);
  return { input, transport, send, replies, server };
}

const echo: McpBackend = {
  memoryRead: () => ({ execute: async (args) => ({ ok: true, output: `read ${JSON.stringify(args)}` }) }),
};

it('answers a line over the limit with an error and keeps serving the lines after it', async () => {
  const { input, send, replies, server } = await serve(echo, 1_000);
  // Split over several writes, as a pipe delivers it: the limit counts the whole line.
  input.write(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"${'x'.repeat(600)}`);
  input.write(`${'y'.repeat(600)}"}}\n`);
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const [tooLong, listed] = await replies(3);
  expect(tooLong).toMatchObject({ id: null, error: { code: -32600 } });
  expect(tooLong!.error!.message).toContain('more than 1000 bytes');
  expect(listed).toMatchObject({ id: 2 });
  expect(listed!.result!.tools).toHaveLength(1);
  await server.close();
});

it('answers a line that is not JSON, and one that is not a JSON-RPC message', async () => {
  const { input, send, replies, server } = await serve(echo);
  input.write('not json\n');
  send({ id: 7, hello: 'world' });
  send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'memory_read', arguments: { query: 'x' } } });
  const [notJson, notRpc, called] = await replies(4);
  expect(notJson).toMatchObject({ id: null, error: { code: -32700 } });
  expect(notRpc).toMatchObject({ id: 7, error: { code: -32600 } });
  expect(called).toMatchObject({ id: 8, result: { isError: false } });
  await server.close();
});

it('answers a request in flight when the input ends before it reports drained', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const slow: McpBackend = {
    memoryRead: () => ({
      execute: async () => {
        started();
        await held;
        return { ok: true, output: 'found it' };
      },
    }),
  };
  const { input, transport, send, replies, server } = await serve(slow);
  send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'memory_read', arguments: { query: 'x' } } });
  input.end();
  await transport.ended;
  await running;
  let drained = false;
  const draining = transport.drain().then((left) => {
    drained = true;
    return left;
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(drained).toBe(false);
  release();
  expect(await draining).toBe(0);
  const [answer] = await replies(2);
  expect(answer).toMatchObject({ id: 3, result: { content: [{ text: 'found it' }] } });
  await server.close();
});

it('stops waiting for requests in flight on its signal, or after its timeout, saying how many are left', async () => {
  const never: McpBackend = { memoryRead: () => ({ execute: () => new Promise(() => undefined) }) };
  const { input, transport, send, server } = await serve(never);
  send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'memory_read', arguments: { query: 'x' } } });
  input.end();
  await transport.ended;
  const controller = new AbortController();
  const draining = transport.drain({ signal: controller.signal });
  controller.abort();
  expect(await draining).toBe(1);
  expect(await transport.drain({ timeoutMs: 0 })).toBe(1);
  await expect(transport.drain({ timeoutMs: 2 ** 31 })).rejects.toThrow(/timeoutMs/);
  await server.close();
});

it('does not wait for a request the client cancelled (MCP sends it no answer)', async () => {
  const never: McpBackend = { memoryRead: () => ({ execute: () => new Promise(() => undefined) }) };
  const { input, transport, send, server } = await serve(never);
  send({ jsonrpc: '2.0', id: 'q', method: 'tools/call', params: { name: 'memory_read', arguments: { query: 'x' } } });
  send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'q', reason: 'user' } });
  input.end();
  await transport.ended;
  expect(await transport.drain()).toBe(0);
  await server.close();
});
