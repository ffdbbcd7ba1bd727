/**
 * The bin always ends: a command that fails (here an out-of-range --window) exits with its code within
 * seconds, and leaves the store free for the next command; a reader that closes stdout early (`| head`) ends it
 * quietly. Child processes, as a user runs them.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import { copyPgliteTemplateTo } from '../support/backends.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
/** Far above a normal start (2-4 s; 10-20 s beside a loaded suite), far below "never". */
const EXIT_WITHIN_MS = 120_000;
let home: string;
let cleanup: () => Promise<void>;

interface Ran {
  code: number | null;
  /** Whether the process had to be killed because it did not end in time. */
  hung: boolean;
  stdout: string;
  stderr: string;
}

function memfold(...args: string[]): Promise<Ran> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args, '--home', home], { env, timeout: EXIT_WITHIN_MS, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      const failure = error as (Error & { code?: number; killed?: boolean }) | null;
      resolve({ code: failure ? (failure.code ?? null) : 0, hung: failure?.killed === true, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'memfold-exit-'));
  copyPgliteTemplateTo(path.join(home, 'pg'));
  cleanup = () => rm(home, { recursive: true, force: true });
});
afterAll(async () => cleanup?.());

it(
  'compact with an out-of-range --window exits naming the setting, and the next command opens the store',
  async () => {
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir: path.join(home, 'pg') });
    await store.append('c1', [{ role: 'user', content: 'the heron counts to seven' }]);
    await store.close();

    for (let attempt = 0; attempt < 2; attempt++) {
      const compact = await memfold('compact', 'c1', '--window', '100');
      expect(compact.hung, 'memfold compact --window 100 did not exit').toBe(false);
      expect([1, 2]).toContain(compact.code);
      expect(compact.stderr).toMatch(/--window|compaction\.contextWindow/);
      expect(compact.stderr).toContain('256');
    }

    const context = await memfold('context', 'c1');
    expect(context.hung).toBe(false);
    expect(context.code, context.stderr).toBe(0);
    expect(context.stdout).toContain('the heron counts to seven');
  },
  4 * EXIT_WITHIN_MS,
);

it(
  'export into a pipe its reader closes early (`| head -1`): exit 0, no stack trace, and the store is free again',
  async () => {
    // Far more than a pipe's buffer (64 KiB), so the export is still writing when the reader goes.
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir: path.join(home, 'pg') });
    await store.append(
      'long',
      Array.from({ length: 400 }, (_, i) => ({
        role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: `turn ${i}: ${'heron '.repeat(100)}`,
      })),
    );
    await store.close();

    const child = spawn(process.execPath, [BIN, 'export', 'long', '--home', home], { env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let first = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        first += chunk.toString();
        // The first record read: the reader goes, as `head -1` does.
        if (first.includes('\n')) {
          child.stdout.destroy();
          resolve();
        }
      });
    });
    expect(JSON.parse(first.slice(0, first.indexOf('\n')))).toMatchObject({ kind: 'conversation', conversationId: 'long' });
    expect(await exited).toBe(0);
    expect(stderr).not.toMatch(/EPIPE|Error|at /);

    const context = await memfold('context', 'long');
    expect(context.code, context.stderr).toBe(0);
  },
  4 * EXIT_WITHIN_MS,
);
