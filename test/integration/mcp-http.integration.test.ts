/**
 * `memfold mcp --http` as an operator runs it: a process that owns the store, serving an allow-list of
 * conversations with compaction allowed, behind a bearer token. Clients use the MCP SDK's Streamable HTTP client.
 * Every call must name a conversation of the list; a missing token, a wrong Host header and a server on a public
 * address without a token are refused; SIGTERM ends it and frees the store.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMemfold } from '../../src/memfold.js';
import { copyPgliteTemplate } from '../support/backends.js';
import { orderChat } from '../support/messages.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
const TOKEN = 'test-token-0123456789abcdef';
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
let root: string;
let server: ChildProcess;
let url: string;

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join('\n');
}

async function client(token = TOKEN): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const mcp = new Client({ name: 'memfold-test', version: '1.0.0' });
  await mcp.connect(transport);
  return mcp;
}

beforeAll(async () => {
  ({ root } = await copyPgliteTemplate());
  const memfold = await createMemfold({ env: {}, config: { home: root }, compaction: { contextWindow: 2_000 } });
  await memfold.append('alice', orderChat(30));
  await memfold.append('bob', orderChat(30, 200));
  await memfold.compact('alice', { force: true });
  await memfold.close();
  server = spawn(process.execPath, [BIN, 'mcp', '--http', '0', '--allow', 'alice,bob', '--writable', '--token', TOKEN, '--home', root], { env });
  url = await new Promise<string>((resolve, reject) => {
    server.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    server.once('exit', (code) => reject(new Error(`memfold mcp exited with ${code}`)));
  });
});
afterAll(async () => {
  if (server.exitCode === null) server.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

it('serves memory_read, context and compact for the conversations of its list, and no other', async () => {
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const mcp = await client();
  try {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual(['memory_read', 'context', 'compact']);
    for (const tool of tools) expect(tool.inputSchema.required).toContain('conversation');

    expect(text(await mcp.callTool({ name: 'memory_read', arguments: { conversation: 'alice', query: 'ORD-503' } }))).toContain('ORD-503');
    expect(text(await mcp.callTool({ name: 'context', arguments: { conversation: 'bob' } }))).toContain('ORD-729');

    const outside = await mcp.callTool({ name: 'memory_read', arguments: { conversation: 'carol', query: 'ORD-503' } });
    expect(outside.isError).toBe(true);
    expect(text(outside)).toContain('not in this server');
    const unnamed = await mcp.callTool({ name: 'context', arguments: {} });
    expect(unnamed.isError).toBe(true);
    expect(text(unnamed)).toContain('`conversation` is required');

    const compacted = await mcp.callTool({ name: 'compact', arguments: { conversation: 'bob', focus: 'order numbers' } });
    expect(compacted.isError, text(compacted)).toBe(false);
    expect(text(await mcp.callTool({ name: 'memory_read', arguments: { conversation: 'bob', query: 'ORD-701' } }))).toContain('ORD-701');
  } finally {
    await mcp.close();
  }
});

it('refuses a client without the token, and a request whose Host is not this machine', async () => {
  await expect(client('wrong-token-0123456789')).rejects.toThrow(/401|Unauthorized/);
  // fetch will not send another Host: node:http will, as a browser tricked by DNS rebinding would.
  const status = await new Promise<number | undefined>((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      host: 'attacker.example',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    request(url, { method: 'POST', headers }, (res) => resolve(res.resume().statusCode))
      .on('error', reject)
      .end(body);
  });
  expect(status).toBe(403);
});

it('refuses to listen beyond loopback without a token, naming the flag', async () => {
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
    execFile(process.execPath, [BIN, 'mcp', '--http', '0', '--host', '0.0.0.0', '--conversation', 'alice', '--home', root], { env }, (error, _out, stderr) =>
      resolve({ code: (error as { code?: number } | null)?.code ?? 0, stderr }),
    ),
  );
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('--token');
});

it('ends on SIGTERM and leaves the store free', async () => {
  const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  expect(await exited).toBe(0);
  const memfold = await createMemfold({ env: {}, config: { home: root } });
  expect((await memfold.history('bob')).length).toBeGreaterThan(0);
  await memfold.close();
});
