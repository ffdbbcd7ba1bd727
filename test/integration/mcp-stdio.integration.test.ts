/**
 * `memfold mcp` over stdio, as an MCP client starts it, beside the agent that owns the embedded store: the agent's
 * process holds PGlite, the server opens only the LanceDB archive (`--read-only`). It lists its tools before any
 * store opens, answers memory_read from what the agent archived (including what it archives while the server runs),
 * and refuses every call outside its conversation. The session is kept as a test artifact.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { copyPgliteTemplate } from '../support/backends.js';
import { orderChat } from '../support/messages.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
const ARTIFACT = new URL('../../test-artifacts/mcp-stdio-session.txt', import.meta.url).pathname;
let root: string;
let agent: Memfold;
const transcript: string[] = [];

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join('\n');
}

async function connect(args: string[]): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'memfold-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  transcript.push(`> tools/call ${name} ${JSON.stringify(args)}`, `< ${result.isError ? 'isError ' : ''}${text(result).slice(0, 400)}`, '');
  return result;
}

beforeAll(async () => {
  ({ root } = await copyPgliteTemplate());
  agent = await createMemfold({ env: {}, config: { home: root }, compaction: { contextWindow: 2_000 } });
  await agent.append('alice', orderChat(30));
  await agent.append(
    'bob',
    orderChat(30).map((m) => ({ ...m, content: `${m.content} Bob ships parcel PKG-7731 to Lisbon.` })),
  );
  for (const id of ['alice', 'bob']) expect((await agent.compact(id, { force: true })).status).toBe('compacted');
  // The control: bob's archive holds the parcel, so a miss below is the scope, not an empty archive.
  expect((await agent.memoryRead('bob').execute({ query: 'PKG-7731' })).output).toContain('Lisbon');
});
afterAll(async () => {
  await agent?.close();
  await rm(root, { recursive: true, force: true });
});

it('serves memory_read beside the agent that holds the store, within its one conversation', async () => {
  const { client, stderr } = await connect(['--read-only', '--conversation', 'alice', '--home', root]);
  try {
    const { tools } = await client.listTools();
    transcript.push(`> tools/list`, `< ${tools.map((t) => t.name).join(', ')}`, '');
    expect(tools.map((t) => t.name)).toEqual(['memory_read']);
    expect(tools[0]!.inputSchema.properties).not.toHaveProperty('conversation');

    const found = await call(client, 'memory_read', { query: 'ORD-501' });
    expect(found.isError).toBe(false);
    expect(text(found)).toContain('ORD-501');

    // Another conversation's words are not reachable, by search or by naming it.
    expect(text(await call(client, 'memory_read', { query: 'PKG-7731 Lisbon' }))).not.toContain('Bob ships');
    const crossed = await call(client, 'memory_read', { query: 'PKG-7731', conversation: 'bob' });
    expect(crossed.isError).toBe(true);
    expect(text(crossed)).toMatch(/^Refused/);
    const badArgs = await call(client, 'memory_read', { query: 'x', limit: 'many' });
    expect(badArgs.isError).toBe(true);
    expect(text(badArgs)).toContain('limit');

    // What the agent archives while the server runs is readable at once.
    await agent.append('alice', orderChat(30, 100));
    expect((await agent.compact('alice', { force: true })).status).toBe('compacted');
    const fresh = await call(client, 'memory_read', { query: 'ORD-601' });
    expect(text(fresh)).toContain('ORD-601');
  } finally {
    await client.close();
  }
  expect(stderr()).toBe('');
  await mkdir(path.dirname(ARTIFACT), { recursive: true });
  await writeFile(ARTIFACT, transcript.join('\n'));
});

it('refuses a home with no store before serving (not on the first call), and creates nothing there', async () => {
  const nowhere = path.join(root, 'nowhere');
  await expect(connect(['--conversation', 'alice', '--home', nowhere, '--read-only'])).rejects.toThrow();
  expect(existsSync(nowhere)).toBe(false);
});

it('refuses a server without a scope, naming the flag', async () => {
  await expect(connect(['--home', root])).rejects.toThrow();
});
