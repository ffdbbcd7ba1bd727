/**
 * `memfold mcp` over stdio as a client drives it, raw JSON-RPC lines on the bin's stdin: a line over 10 MiB is
 * answered with an error and the server keeps answering; a request in flight when stdin closes is answered before
 * the process exits 0; `--allow` ids are exact (` a` is not `a`).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMemfold } from '../../src/memfold.js';
import { copyPgliteTemplate } from '../support/backends.js';
import { orderChat } from '../support/messages.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
let home: string;

beforeAll(async () => {
  ({ root: home } = await copyPgliteTemplate());
  const memfold = await createMemfold({ env: {}, config: { home }, compaction: { contextWindow: 2_000 } });
  await memfold.append('a', orderChat(30));
  expect((await memfold.compact('a', { force: true })).status).toBe('compacted');
  await memfold.close();
});
afterAll(() => rm(home, { recursive: true, force: true }));

interface Reply {
  id: string | number | null;
  result?: {
    tools?: Array<{ inputSchema: { properties: Record<string, { enum?: string[] }> } }>;
    content?: Array<{ text: string }>;
    isError?: boolean;
  };
  error?: { code: number; message: string };
}

/** The bin serving `args`, with what it answers line by line and how it exits. */
function start(args: string[]) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [BIN, 'mcp', '--home', home, ...args], { env });
  const replies: Reply[] = [];
  let buffered = '';
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
      replies.push(JSON.parse(buffered.slice(0, newline)) as Reply);
      buffered = buffered.slice(newline + 1);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  exited.then(() => waiters.splice(0).forEach((wake) => wake()));
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    child,
    send,
    exited,
    stderr: () => stderr,
    /** The first `count` replies, or fewer if the process exits first. */
    async replies(count: number): Promise<Reply[]> {
      while (replies.length < count && child.exitCode === null) await new Promise<void>((resolve) => waiters.push(resolve));
      return replies.slice(0, count);
    },
  };
}

it('answers a line over 10 MiB with a JSON-RPC error, then serves the next request', async () => {
  const server = start(['--conversation', 'a', '--read-only']);
  server.child.stdin.write(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"${'x'.repeat(10 * 1024 * 1024)}"}}\n`);
  server.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const [, tooLong, listed] = await server.replies(3);
  expect(tooLong).toMatchObject({ id: null, error: { code: -32600 } });
  expect(listed).toMatchObject({ id: 2, result: { tools: [{}] } });
  server.child.stdin.end();
  expect(await server.exited).toBe(0);
  expect(server.stderr()).toBe('');
});

it('answers a request in flight when stdin closes, then exits 0', async () => {
  const server = start(['--conversation', 'a', '--read-only']);
  await server.replies(1);
  // The first call opens the archive: stdin closes while it does.
  server.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'memory_read', arguments: { query: 'ORD-503' } } });
  server.child.stdin.end();
  const [, answer] = await server.replies(2);
  expect(answer).toMatchObject({ id: 5, result: { isError: false } });
  expect(answer!.result!.content![0]!.text).toContain('ORD-503');
  expect(await server.exited).toBe(0);
});

it('serves the --allow ids exactly as given: " a" is not "a"', async () => {
  const server = start(['--allow', ' a,b ', '--read-only']);
  server.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const [, listed] = await server.replies(2);
  expect(listed!.result!.tools![0]!.inputSchema.properties.conversation!.enum).toEqual([' a', 'b ']);
  server.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'memory_read', arguments: { conversation: 'a', query: 'x' } } });
  const [, , refused] = await server.replies(3);
  expect(refused).toMatchObject({ id: 2, result: { isError: true } });
  server.child.stdin.end();
  expect(await server.exited).toBe(0);
});
