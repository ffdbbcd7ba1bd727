/**
 * Running the durability children as separate Node processes. Each child script is bundled once
 * (esbuild, packages left external) into `.test-build/`, so a child starts in about half a second
 * instead of the second and more that loading every source file through tsx costs: the crash test
 * starts a hundred of them (and bundles the pure-JavaScript packages as well, see `bundlePackages`).
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
  remove(): Promise<void>;
}

/**
 * Packages a child loads from node_modules even when `bundlePackages` is set: LanceDB (a native addon) with the
 * Arrow it shares objects with, PGlite (finds its wasm beside itself), pg's optional native binding, and the ones
 * loaded lazily or not at all on the children's paths.
 */
const ALWAYS_EXTERNAL = ['@lancedb/lancedb', 'apache-arrow', '@electric-sql/pglite', 'pg-native', 'openai', 'js-tiktoken'];

export interface BundleOptions {
  /**
   * Bundle the pure-JavaScript packages too (kysely, pg, pg-boss, zod, ...): the same code, but read from one file,
   * which halves the half second a child spends loading modules. For tests that start many children.
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
  return { file, remove: () => rm(file, { force: true }) };
}

/** Run a bundled child with `args`; resolves when it exits, however it exits. */
export function runChild(child: BundledChild, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child.file, ...args], {
      env: { ...process.env, ...env },
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
