/**
 * Every benchmark of `run.ts` at its smoke size (`--smoke`), run as `npm run bench` runs them: each must finish and
 * write its `<name>.json` with figures, and its table in `summary.md`. The figures are not checked (timings on a
 * shared machine mean nothing here): this only keeps a benchmark from breaking unnoticed. PGlite homes start from the
 * suite's migrated template; PostgreSQL cases use DATABASE_URL (required in CI).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, inject, it } from 'vitest';
import { postgresServerUrl } from '../support/backends.js';
import { describeWithSharedData } from '../support/shared-data.js';
import { BENCHMARKS } from './run.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

function runBench(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/run.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

// Five of them read the datasets: with them here, or always in CI.
describeWithSharedData('benchmarks, smoke size', () => {
  it('each runs and writes its result file and its table', { timeout: 900_000 }, async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'memfold-bench-smoke-'));
    dirs.push(out);
    const databaseUrl = postgresServerUrl();
    const { code, output } = await runBench(['--smoke', '--out', out], {
      MEMFOLD_BENCH_PGLITE_TEMPLATE: inject('pgliteTemplateDir'),
      DATABASE_URL: databaseUrl ?? '',
    });
    expect(code, output.slice(-4000)).toBe(0);
    const summary = await readFile(path.join(out, 'summary.md'), 'utf8');
    for (const name of Object.keys(BENCHMARKS)) {
      const written = JSON.parse(await readFile(path.join(out, `${name}.json`), 'utf8')) as { name: string; title: string; smoke: boolean; result: unknown };
      expect(written.name).toBe(name);
      expect(written.smoke).toBe(true);
      // Figures, not a skip: background-load alone needs PostgreSQL, which CI always has.
      if (name !== 'background-load' || databaseUrl !== undefined) expect(written.result, name).toBeTruthy();
      expect(summary).toContain(`## ${written.title}`);
    }
  });
});
