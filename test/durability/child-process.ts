/**
 * Running the durability children as separate Node processes. Each child script is bundled once
 * (esbuild, packages left external) into `.test-build/`, so a child starts in about half a second
 * instead of the second and more that loading every source file through tsx costs: the crash test
 * starts a hundred and twenty of them (and bundles the JavaScript of the packages as well, see `bundlePackages`).
 * Every child of a bundle shares one V8 compile cache (NODE_COMPILE_CACHE): the first compiles the bundle, the
 * others load its code cache instead of compiling the megabytes again.
 */
import { spawn } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Under the project root, so the bundle resolves packages from node_modules and finds migrations/. */
const BUILD_DIR = path.join(ROOT, '.test-build');

/** esbuild as tsx (a dev dependency) ships it. */
function esbuild(): typeof import('esbuild') {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));
  return fromTsx('esbuild') as typeof import('esbuild');
}

export interface BundledChild {
  file: string;
  /** The children's shared V8 compile cache (removed with the bundle). */
  compileCache: string;
  remove(): Promise<void>;
}

/**
 * What a child loads from node_modules even when `bundlePackages` is set: LanceDB's native addon (the platform
 * package `@lancedb/lancedb-<platform>`, or a `.node` file; LanceDB's JavaScript and the Arrow it shares objects
 * with are bundled together, so they still share one Arrow), PGlite (finds its wasm beside itself), pg's optional
 * native binding, and the ones loaded lazily or not at all on the children's paths.
 */
const ALWAYS_EXTERNAL = ['@lancedb/lancedb-*', '*.node', '@electric-sql/pglite', 'pg-native', 'openai', 'js-tiktoken'];

export interface BundleOptions {
  /**
   * Bundle the JavaScript of the packages too (kysely, pg, pg-boss, zod, LanceDB's and Arrow's, ...): the same code,
   * but read from one file instead of resolving hundreds of modules, which halves the time a child spends loading
   * them. For tests that start many children.
   */
  bundlePackages?: boolean;
}

/** Bundle `script` (a .ts file) into one ES module; the name carries the pid, so parallel test runs do not collide. */
export async function bundleChild(script: URL, options: BundleOptions = {}): Promise<BundledChild> {
  await mkdir(BUILD_DIR, { recursive: true });
  const file = path.join(BUILD_DIR, `${path.basename(script.pathname, '.ts')}-${process.pid}.mjs`);
  await esbuild().build({
    entryPoints: [fileURLToPath(script)],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    ...(options.bundlePackages
      ? {
          external: ALWAYS_EXTERNAL,
          // CommonJS packages in an ES module bundle call require() for node: builtins.
          banner: { js: "import { createRequire as __memfoldCreateRequire } from 'node:module'; const require = __memfoldCreateRequire(import.meta.url);" },
        }
      : { packages: 'external' as const }),
    logLevel: 'error',
  });
  const compileCache = `${file}.compile-cache`;
  await rm(compileCache, { recursive: true, force: true });
  await warmCompileCache(file, compileCache);
  return {
    file,
    compileCache,
    remove: () => Promise.all([rm(file, { force: true }), rm(compileCache, { recursive: true, force: true })]).then(() => undefined),
  };
}

/**
 * Fill the compile cache before the first child runs: most children die by SIGKILL, and a process killed that way
 * never writes the cache. A child that is given no job fails on its first line, after its modules are compiled and
 * loaded, and the cache is written when it exits.
 */
async function warmCompileCache(file: string, compileCache: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const proc = spawn(process.execPath, [file], { env: { ...process.env, NODE_COMPILE_CACHE: compileCache }, stdio: 'ignore' });
    proc.on('error', reject);
    proc.on('close', () => resolve());
  });
}

/** Run a bundled child with `args`; resolves when it exits, however it exits. */
export function runChild(child: BundledChild, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildExit> {
  return spawnChild(child, args, env, 'ignore').exit;
}

/** Start a child of the bundle (with its compile cache), collecting its output until it exits. */
function spawnChild(
  child: BundledChild,
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin: 'ignore' | 'pipe',
): { proc: ReturnType<typeof spawn>; exit: Promise<ChildExit> } {
  const proc = spawn(process.execPath, [child.file, ...args], {
    env: { ...process.env, NODE_COMPILE_CACHE: child.compileCache, ...env },
    stdio: [stdin, 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  proc.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<ChildExit>((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { proc, exit };
}

/** Children started ahead of their jobs (see `startedChildren`). */
export interface StartedChildren {
  /** Hand `job` to a started child (one is started at once if none waits); resolves when it exits, and its successor starts. */
  run(job: string): Promise<ChildExit>;
  /** End the children still waiting for a job. */
  close(): Promise<void>;
}

/**
 * Keep `ready` children of a bundle started, each loading its modules and then waiting for its job on standard input
 * (a child reads it there when it is given no argument), so that a run does not wait for Node to start and load the
 * bundle: that happens while the test checks the previous run. What a child does from its job on is the same as with
 * `runChild`.
 */
export function startedChildren(child: BundledChild, ready: number, env: NodeJS.ProcessEnv = {}): StartedChildren {
  type Waiting = ReturnType<typeof spawnChild>;
  const start = (): Waiting => {
    const started = spawnChild(child, [], env, 'pipe');
    // A child that dies before its job is written must not fail the write.
    started.proc.stdin!.on('error', () => undefined);
    // Handled by whoever runs it; a waiting child that is closed is not an error.
    started.exit.catch(() => undefined);
    return started;
  };
  const waiting: Waiting[] = Array.from({ length: ready }, start);
  let closed = false;
  return {
    run(job) {
      const next = waiting.shift() ?? start();
      next.proc.stdin!.end(`${job}\n`);
      // The successor starts when this child is gone, not beside it: loading next to a running compaction would slow
      // it, and so move where a kill at a random moment lands.
      return next.exit.finally(() => {
        if (!closed) waiting.push(start());
      });
    },
    async close() {
      closed = true;
      const left = waiting.splice(0);
      for (const w of left) w.proc.kill('SIGKILL');
      await Promise.all(left.map((w) => w.exit.catch(() => undefined)));
    },
  };
}
