/**
 * The `memfold` CLI as a user runs it, on an embedded home (a copy of the prepared PGlite directory, LanceDB beside
 * it), no network, no configuration. The demo and the exit codes of bad arguments and a bad file go through the bin,
 * child processes of the built `dist/`; the other commands run through the CLI's `main` in this process (parsing,
 * configuration from the environment and output included), which spares each a Node start and a module load.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import { copyPgliteTemplateTo } from '../support/backends.js';
import { runCli } from '../support/run-cli.js';

const run = promisify(execFile);
const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
/**
 * The demo replays hundreds of turns in a child process: 10-15 s on an idle machine, over a minute beside a loaded
 * suite. The bound is for a hang, not a speed.
 */
const DEMO_HANG_MS = 300_000;
let home: string;
let cleanup: () => Promise<void>;

async function memfold(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return memfoldWith({}, ...args);
}

async function memfoldWith(extraEnv: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, MEMFOLD_HOME: home, ...extraEnv };
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** One command through the CLI's `main`, in this process, on the test's home (MEMFOLD_HOME) and `extraEnv`. */
async function inProcess(extraEnv: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, { env: { MEMFOLD_HOME: home, ...extraEnv } });
}
const cli = (...args: string[]) => inProcess({}, ...args);

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'memfold-cli-'));
  copyPgliteTemplateTo(path.join(home, 'pg'));
  cleanup = () => rm(home, { recursive: true, force: true });
});
afterAll(async () => cleanup?.());

describe('memfold CLI', () => {
  let demoId = '';

  it(
    'demo: offline, no configuration: context with the clip-archive, a deep tree, the planted facts found',
    async () => {
      const { code, stdout, stderr } = await memfold('demo');
      expect(code, stderr).toBe(0);
      demoId = /conversation (demo-\S+)/.exec(stderr)![1]!;
      expect(stderr).toMatch(/replaying \[#+\] \d+\/\d+/);
      const context = stdout.slice(stdout.indexOf('=== The context'), stdout.indexOf('=== Archived'));
      const blocks = context.split(/\n(?=── )/).filter((b) => b.startsWith('── '));
      expect(blocks[0]).toMatch(/^── system ·/);
      expect(blocks[1]).toMatch(/^── system \(clip-archive\) · .*\n\[Context Summary/);
      expect(stdout).toMatch(/^ *depth [1-9] /m);
      for (const fact of ['4417', '/srv/atlas/releases/v2.3.1', '14 March']) expect(stdout).toContain(`looking for "${fact}": found`);
    },
    DEMO_HANG_MS,
  );

  it('inspect, search, context and resummarize work on what the demo archived', async () => {
    const inspect = (JSON.parse((await cli('inspect', demoId, '--json')).stdout) as { batches: Array<{ depth: number; label: string; parentLabel?: string }> })
      .batches;
    expect(Math.max(...inspect.map((b) => b.depth))).toBeGreaterThanOrEqual(1);

    const search = JSON.parse((await cli('search', 'bike lock code', '--conversation', demoId, '--json')).stdout) as { ok: boolean; output: string };
    expect(search).toMatchObject({ ok: true });
    expect(search.output).toContain('4417');

    const context = JSON.parse((await cli('context', demoId, '--json')).stdout) as Array<{ kind: string; content: string }>;
    expect(context[1]!.kind).toBe('clip_archive');

    const frontierDepth0 = inspect.filter((b) => b.depth === 0 && !b.parentLabel).length;
    const resummarize = await cli('resummarize', demoId, '--depth', '0', '--json');
    if (frontierDepth0 >= 2) {
      expect(resummarize.code, resummarize.stderr).toBe(0);
      const made = JSON.parse(resummarize.stdout) as { created: Array<{ depth: number; count: number }>; clipArchive: string };
      expect(made.created[0]).toMatchObject({ depth: 1, count: frontierDepth0 });
      const after = (JSON.parse((await cli('inspect', demoId, '--json')).stdout) as { batches: Array<{ depth: number; parentLabel?: string }> }).batches;
      expect(after.filter((b) => b.depth === 0 && !b.parentLabel)).toHaveLength(0);
    } else {
      expect(resummarize.code).toBe(1);
      expect(resummarize.stderr).toContain('Invalid argument depth');
    }
  });

  it('import, compact --force, context: a JSONL conversation end to end', async () => {
    const file = path.join(home, 'chat.jsonl');
    const lines = [];
    for (let i = 0; i < 40; i++) {
      lines.push(
        JSON.stringify({
          conversation_id: 'imported',
          role: 'user',
          content: `Question ${i} about the invoice INV-${7000 + i}.`,
          created_at: new Date(Date.UTC(2024, 4, 1, 9, i)).toISOString(),
        }),
      );
      lines.push(JSON.stringify({ conversation_id: 'imported', role: 'assistant', content: `Answer ${i}: the invoice INV-${7000 + i} is paid.` }));
    }
    await writeFile(file, lines.join('\n'));
    const imported = await cli('import', file, '--json');
    expect(JSON.parse(imported.stdout)).toEqual({ imported: { imported: 80 }, skipped: { imported: 0 } });
    const compact = await cli('compact', 'imported', '--force', '--window', '2000', '--json');
    expect(compact.code, compact.stderr).toBe(0);
    expect(JSON.parse(compact.stdout)).toMatchObject({ status: 'compacted' });
    const search = await cli('search', 'INV-7003', '--conversation', 'imported');
    expect(search.stdout).toContain('INV-7003');
  });

  it('bad arguments exit 2 naming the argument; a bad file exits 1 naming the line', async () => {
    const bad = await memfold('search', 'q');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Invalid argument --conversation: is required');
    const file = path.join(home, 'bad.jsonl');
    await writeFile(file, '{"role":"user","content":"ok"}\n{"role":"wizard","content":"x"}\n');
    const imported = await memfold('import', file, '--conversation', 'x');
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain('Invalid argument line 2.role');
    expect((await memfold('context', 'x', '--json')).stdout.trim()).toBe('[]');
  });

  it('MEMFOLD_MAX_MESSAGE_BYTES reaches the store; a bad value is refused naming the variable', async () => {
    const file = path.join(home, 'big.jsonl');
    await writeFile(file, `{"role":"user","content":"short"}\n{"role":"user","content":"${'x'.repeat(200)}"}\n`);
    const refused = await inProcess({ MEMFOLD_MAX_MESSAGE_BYTES: '100' }, 'import', file, '--conversation', 'big');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('line 2.content');
    expect((await cli('context', 'big', '--json')).stdout.trim()).toBe('[]');
    const bad = await inProcess({ MEMFOLD_MAX_MESSAGE_BYTES: '-5' }, 'context', 'big');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('MEMFOLD_MAX_MESSAGE_BYTES');
  });

  it('reconcile undoes an operation a crash left planned, and reports it', async () => {
    // The journal row a compaction killed right after planning leaves behind.
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir: path.join(home, 'pg') });
    await store.recordOperation({ id: 'op-crashed', conversationId: 'imported', status: 'planned', messageIds: [], labels: [] });
    await store.close();
    const result = await cli('reconcile', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([expect.objectContaining({ operationId: 'op-crashed', conversationId: 'imported', action: 'rolled_back' })]);
    expect((await cli('reconcile')).stdout.trim()).toBe('nothing to reconcile');
  });
});
