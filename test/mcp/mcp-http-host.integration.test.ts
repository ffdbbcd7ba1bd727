/**
 * The Host check of an MCP server on loopback: a header naming this machine at the server's port is answered
 * whatever its case (`LOCALHOST:port`), on any loopback address the server listens on (`127.0.0.2`, with its own
 * Host header); another name (DNS rebinding) or another port is refused with 403.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopback, loopbackHostAllowed } from '../../src/mcp/mcp-http-auth.js';
import { serveMcpHttp, type McpHttpListener } from '../../src/mcp/mcp-http.js';
import { mcpScope } from '../../src/mcp/mcp-scope.js';
import { createMcpServer } from '../../src/mcp/mcp-server.js';

function post(url: string, host: string): Promise<number | undefined> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const headers = { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  return new Promise((resolve, reject) => {
    request(url, { method: 'POST', headers }, (res) => resolve(res.resume().statusCode))
      .on('error', reject)
      .end(body);
  });
}

const server = () =>
  createMcpServer({
    scope: mcpScope({ conversation: 'c' }),
    access: 'archive',
    backend: async () => ({ memoryRead: () => ({ execute: async () => ({ ok: true, output: '' }) }) }),
    version: '0.0.0',
  });

describe.each(['127.0.0.1', '127.0.0.2'])('listening on %s', (host) => {
  let listener: McpHttpListener;
  let port: number;
  beforeAll(async () => {
    listener = await serveMcpHttp({ server, host });
    port = Number(new URL(listener.url).port);
  });
  afterAll(() => listener.close());

  it('answers a Host header naming this machine at its port, in any case', async () => {
    for (const name of [host, 'localhost', 'LOCALHOST', 'LocalHost', '[::1]']) expect(await post(listener.url, `${name}:${port}`), name).toBe(200);
  });

  it('refuses another name or another port (DNS rebinding)', async () => {
    for (const name of ['attacker.example', 'localhost.attacker.example', '10.0.0.1']) expect(await post(listener.url, `${name}:${port}`), name).toBe(403);
    expect(await post(listener.url, `localhost:${port + 1}`)).toBe(403);
    expect(await post(listener.url, 'localhost')).toBe(403);
  });
});

it('counts 127.0.0.0/8, ::1 in any spelling and localhost as loopback, and nothing else', () => {
  for (const host of ['127.0.0.1', '127.0.0.2', '127.255.255.254', 'localhost', 'LOCALHOST', '::1', '[::1]', '0:0:0:0:0:0:0:1'])
    expect(isLoopback(host), host).toBe(true);
  for (const host of ['0.0.0.0', '128.0.0.1', '127.0.0.256', '127.1', '::', '::ffff:10.0.0.1', 'localhost.example', ''])
    expect(isLoopback(host), host).toBe(false);
  expect(loopbackHostAllowed('127.0.0.9:80', 80)).toBe(true);
  expect(loopbackHostAllowed(undefined, 80)).toBe(false);
  expect(loopbackHostAllowed('[::1]:80', 81)).toBe(false);
});
