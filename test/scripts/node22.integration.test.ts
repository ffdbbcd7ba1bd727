/** scripts/node22.mjs run as the package.json scripts run it: on Node 22 a passthrough that installs nothing. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileCleanups } from '../support/cleanups.js';

const cleanups = fileCleanups();
const LAUNCHER = path.resolve(import.meta.dirname, '../../scripts/node22.mjs');

describe('node scripts/node22.mjs <command> on Node 22', () => {
  it('runs the command with its arguments, passes its exit code on and installs nothing', async () => {
    const cache = path.join(await cleanups.tempDir('memfold-node22-'), 'cache');
    const env = { ...process.env, MEMFOLD_NODE_CACHE: cache };
    const script = 'console.log(process.argv.slice(1).join(" ")); process.exit(3)';
    const run = spawnSync(process.execPath, [LAUNCHER, 'node', '-e', script, 'a b', 'c'], { env, encoding: 'utf8' });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({ status: 3, stdout: 'a b c\n', stderr: '' });
    expect(existsSync(cache)).toBe(false);
  });

  it('--bin-dir prints an empty line: there is nothing to put on PATH', () => {
    const run = spawnSync(process.execPath, [LAUNCHER, '--bin-dir'], { encoding: 'utf8' });
    expect({ status: run.status, stdout: run.stdout }).toEqual({ status: 0, stdout: '\n' });
  });
});
