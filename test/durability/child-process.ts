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
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child.file, ...args], {
      env: { ...process.env, NODE_COMPILE_CACHE: child.compileCache, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on('error', reject);
    proc.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
