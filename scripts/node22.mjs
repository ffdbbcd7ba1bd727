#!/usr/bin/env node
// Runs a command of this repository's own scripts under Node 22 or later.
//
//   node scripts/node22.mjs <command> [args...]   run <command> with a Node >= 22 first on PATH
//   node scripts/node22.mjs --bin-dir             print the folder of the Node 22 to put on PATH ('' when the
//                                                 running node is new enough), installing it first if needed
//
// On Node 22+ it only runs the command (nothing is installed, nothing on stderr). On an older node it installs
// the pinned Node 22 from the npm registry (the `node-linux-<arch>` package) into a cache folder once, never over
// the system's node, and runs the command with that node first on PATH: `#!/usr/bin/env node` bins (tsc, vitest,
// tsx, npm) then run under it. Plain JavaScript with no dependencies, so it runs on the old node too.
// Development tooling only: not part of the published package.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The Node 22 the scripts get on an older node. Pinned, so every machine builds and tests with the same one. */
export const NODE22_VERSION = '22.23.3';
export const MIN_MAJOR = 22;

/** The cache folder: MEMFOLD_NODE_CACHE, else $XDG_CACHE_HOME/memfold/node22, else ~/.cache/memfold/node22. */
export function cacheDir({ env, home }) {
  if (env.MEMFOLD_NODE_CACHE) return env.MEMFOLD_NODE_CACHE;
  return path.join(env.XDG_CACHE_HOME || path.join(home, '.cache'), 'memfold', 'node22');
}

/** The npm package that holds a Node binary for this machine, or undefined when there is none. */
export function packageName({ platform, arch }) {
  const cpu = { x64: 'x64', arm64: 'arm64' }[arch];
  return platform === 'linux' && cpu ? `node-linux-${cpu}` : undefined;
}

/**
 * What to do on this node: run the command as it is (`null`), or run it with the cached Node 22 first on PATH
 * (the folder of that node, its `bin/`, and the package to install when it is not there yet).
 */
export function plan({ version, env, home, platform, arch }) {
  if (Number(version.split('.')[0]) >= MIN_MAJOR) return null;
  const name = packageName({ platform, arch });
  if (!name)
    throw new Error(
      `node ${version} is older than ${MIN_MAJOR} and there is no Node ${MIN_MAJOR} package for ${platform}-${arch}: install Node ${MIN_MAJOR} or later`,
    );
  const cache = cacheDir({ env, home });
  const nodeDir = path.join(cache, 'node_modules', name);
  return { cache, nodeDir, binDir: path.join(nodeDir, 'bin'), spec: `${name}@${NODE22_VERSION}` };
}

function installedVersion(nodeDir) {
  try {
    return JSON.parse(readFileSync(path.join(nodeDir, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Install `spec` with npm into `into` (the npm that runs this script when npm does, else the one on PATH). */
export function npmInstall({ spec, into }) {
  const npmCli = process.env.npm_execpath;
  const args = ['install', '--prefix', into, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--engine-strict=false', spec];
  const result = npmCli?.endsWith('.js')
    ? spawnSync(process.execPath, [npmCli, ...args], { stdio: ['ignore', 2, 2] })
    : spawnSync('npm', args, { stdio: ['ignore', 2, 2] });
  if (result.status !== 0) throw new Error(`npm install ${spec} failed (exit ${result.status ?? result.signal})`);
}

/**
 * Make sure the planned node is in the cache, installing it when it is missing or another version. It is installed
 * into a folder of this process and renamed into place, so two scripts starting at once never see half a node.
 */
export function ensureNode({ planned, install = npmInstall, log = (line) => process.stderr.write(`${line}\n`) }) {
  const wanted = planned.spec.slice(planned.spec.lastIndexOf('@') + 1);
  if (existsSync(path.join(planned.binDir, 'node')) && installedVersion(planned.nodeDir) === wanted) return;
  log(`memfold: node ${process.versions.node} is older than ${MIN_MAJOR}; installing ${planned.spec} into ${planned.cache} (once)`);
  const staging = path.join(planned.cache, `.install-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    install({ spec: planned.spec, into: staging });
    const built = path.join(staging, 'node_modules', path.basename(planned.nodeDir));
    if (!existsSync(path.join(built, 'bin', 'node'))) throw new Error(`${planned.spec} holds no bin/node`);
    mkdirSync(path.dirname(planned.nodeDir), { recursive: true });
    // A stale or other version goes; a concurrent install of the same version may have won the race, which is fine.
    if (installedVersion(planned.nodeDir) !== wanted) rmSync(planned.nodeDir, { recursive: true, force: true });
    try {
      renameSync(built, planned.nodeDir);
    } catch (error) {
      if (installedVersion(planned.nodeDir) !== wanted) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The environment a command runs in: the planned node first on PATH, native addons built against its headers. */
export function environment({ planned, env }) {
  if (!planned) return env;
  return { ...env, PATH: `${planned.binDir}${path.delimiter}${env.PATH ?? ''}`, npm_config_nodedir: planned.nodeDir };
}

function main(argv) {
  const planned = plan({ version: process.versions.node, env: process.env, home: homedir(), platform: process.platform, arch: process.arch });
  if (planned) ensureNode({ planned });
  if (argv[0] === '--bin-dir') {
    process.stdout.write(planned ? `${planned.binDir}\n` : '\n');
    return;
  }
  if (argv.length === 0) throw new Error('usage: node scripts/node22.mjs <command> [args...] | --bin-dir');
  const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', env: environment({ planned, env: process.env }), shell: process.platform === 'win32' });
  // Ctrl-C reaches the child from the terminal; a signal sent to this process alone is passed on.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`memfold: cannot run ${argv[0]}: ${error.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`memfold: ${error.message}\n`);
    process.exit(1);
  }
}
