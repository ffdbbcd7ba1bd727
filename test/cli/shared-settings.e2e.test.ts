/**
 * A conversation's settings set in one process are obeyed by the others on the same store: an application opens a
 * PGlite home, gives conversation `c` (and `m`) a 4,096-token window with `configure(..., { conversationId })`, and
 * closes; then the bin's `usage`, `compact` and `mcp --writable` (its compact tool's floor), each its own process with
 * no flag, compact with that window. `memfold config` shows, changes and resets them; a `--window` on the call wins.
 */
import { spawn, spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultTrigger } from '../../src/compaction/compaction-settings-defaults.js';
import { createMemfold } from '../../src/memfold.js';
import { copyPgliteTemplate } from '../support/backends.js';
import { orderChat } from '../support/messages.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
const WINDOW = 4_096;
/** The target a 4,096-token window brings (35% of it): the compact tool's floor. */
const TARGET = Math.floor(WINDOW * 0.35);
let home: string;

function memfold(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args, '--home', home], { env, encoding: 'utf8' });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

beforeAll(async () => {
  ({ root: home } = await copyPgliteTemplate());
  const app = await createMemfold({ env: {}, config: { home } });
  try {
    for (const id of ['c', 'm']) {
      expect((await app.configure({ contextWindow: WINDOW }, { conversationId: id })).trigger).toBe(defaultTrigger(WINDOW));
      await app.append(id, orderChat(55));
      const { tokens } = await app.usage(id);
      // Past this window's trigger, far under the default window's target (44,800): only the stored window compacts it.
      expect(tokens).toBeGreaterThan(defaultTrigger(WINDOW));
      expect(tokens).toBeLessThan(44_800);
    }
  } finally {
    await app.close();
  }
}, 60_000);
afterAll(() => rm(home, { recursive: true, force: true }));

describe('settings stored by the application', () => {
  it('memfold usage, a process of its own, counts against the stored window', () => {
    const run = memfold('usage', 'c', '--json');
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ contextWindow: WINDOW, trigger: defaultTrigger(WINDOW), targetTokens: TARGET, next: 'compact' });
  });

  it('a --window on the call wins over the stored one, for that call only', () => {
    const run = memfold('usage', 'c', '--window', '100000', '--json');
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ contextWindow: 100_000, next: 'none' });
    expect(memfold('config', 'c', '--json').out).toContain(`"contextWindow": ${WINDOW}`);
  });

  it('mcp --writable: its compact tool compacts over the stored target, not the default 44,800', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--home', home, '--conversation', 'm', '--writable'], { env });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => void (out += chunk.toString()));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'compact', arguments: {} } });
    while (!out.split('\n').some((line) => line.includes('"id":1'))) await new Promise((resolve) => setTimeout(resolve, 50));
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
    const reply = JSON.parse(out.split('\n').find((line) => line.includes('"id":1'))!) as { result: { content: Array<{ text: string }> } };
    const text = reply.result.content[0]!.text;
    expect(text).not.toContain('No compaction needed');
    expect(text).toMatch(/^Compacted: /);
  }, 60_000);

  it('memfold compact, a process of its own, compacts by the stored window and says so', () => {
    const run = memfold('compact', 'c', '--json');
    expect(run.code, run.err).toBe(0);
    const result = JSON.parse(run.out) as { status: string; tokensAfter: number };
    expect(result.status).toBe('compacted');
    expect(result.tokensAfter).toBeLessThan(defaultTrigger(WINDOW));
  }, 60_000);
});

describe('memfold config', () => {
  it('prints the stored settings and those in force; sets more, merged; --unset and --reset put them back', () => {
    const shown = memfold('config', 'c');
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain('stored settings, for every process on this store:\n  contextWindow 4096\n');
    expect(shown.out).toContain(`  trigger ${defaultTrigger(WINDOW)}\n`);

    const set = memfold('config', 'c', '--target', '1000', '--session-scope', 'fixedCount', '--exclude-tools', 'bash,grep', '--json');
    expect(set.code, set.err).toBe(0);
    expect(JSON.parse(set.out)).toMatchObject({
      stored: { contextWindow: WINDOW, targetTokens: 1_000, sessionScope: 'fixedCount', excludeTools: ['bash', 'grep'] },
      settings: { contextWindow: WINDOW, targetTokens: 1_000, sessionScope: 'fixedCount' },
    });
    expect(JSON.parse(memfold('usage', 'c', '--json').out)).toMatchObject({ targetTokens: 1_000 });

    const unset = memfold('config', 'c', '--unset', 'target,exclude-tools', '--json');
    expect(JSON.parse(unset.out).stored).toStrictEqual({ contextWindow: WINDOW, sessionScope: 'fixedCount' });

    const reset = memfold('config', 'c', '--reset');
    expect(reset.code, reset.err).toBe(0);
    expect(reset.out).toMatch(/^stored settings removed\.\nconversation c: no stored settings/);
    expect(JSON.parse(memfold('usage', 'c', '--json').out)).toMatchObject({ contextWindow: 128_000 });
  }, 60_000);

  it('refuses a bad value naming its flag (exit 2), storing nothing', () => {
    const bad = memfold('config', 'm', '--window', '100');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--window: must be an integer >= 256 (got 100)');
    const crossed = memfold('config', 'm', '--target', '5000');
    expect(crossed.code).toBe(2);
    expect(crossed.err).toContain(`--target: must be < trigger (${defaultTrigger(WINDOW)})`);
    expect(memfold('config', 'm', '--mode', 'erase').err).toContain('--mode: must be one of delete, overlay');
    expect(JSON.parse(memfold('config', 'm', '--json').out).stored).toStrictEqual({ contextWindow: WINDOW });
  }, 60_000);
});
