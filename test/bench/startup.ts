/**
 * What a program pays before its first compaction, on the compiled package (`dist/`, built first, as
 * `npm install` builds it): a cold `import('memfold')`, the first `createMemfold()` on an empty home
 * (PGlite's data directory unpacked from the template the build ships, then any newer migration; the LanceDB
 * folder made) and a second open of the same home.
 * Every sample is a fresh `node` process with no loader, so each time is cold and each peak RSS its own.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { fmt, median, sized, table, tempDir, tempHome, type BenchOptions, type BenchResult } from './bench-kit.js';

const exec = promisify(execFile);
const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const ENTRY = pathToFileURL(path.join(ROOT, 'dist/src/index.js')).href;

interface Sample {
  /** `import('memfold')`, ms. */
  importMs: number;
  /** `createMemfold()` then `close()`, ms; absent for import-only samples. */
  openMs?: number;
  /** The process's peak RSS, MiB. */
  peakRssMiB: number;
}

/** A child that imports the package, optionally opens (and closes) a memfold on `home`, and prints a Sample. */
function childScript(home: string | undefined): string {
  return `
const t0 = performance.now();
const memfold = await import(${JSON.stringify(ENTRY)});
const importMs = performance.now() - t0;
let openMs;
if (${JSON.stringify(home ?? null)} !== null) {
  const t1 = performance.now();
  const m = await memfold.createMemfold({ env: { MEMFOLD_HOME: ${JSON.stringify(home ?? '')} } });
  await m.close();
  openMs = performance.now() - t1;
}
console.log(JSON.stringify({ importMs, openMs, peakRssMiB: process.resourceUsage().maxRSS / 1024 }));
process.exit(0);
`;
}

async function sample(home?: string): Promise<Sample> {
  // LANCEDB_LOG as the bin sets it; the library itself sets nothing.
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', childScript(home)], {
    cwd: ROOT,
    env: { ...process.env, LANCEDB_LOG: 'error' },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Sample;
}

/** Node itself, for scale: a process that imports nothing. */
async function bareNodeMs(): Promise<number> {
  const t0 = performance.now();
  await exec(process.execPath, ['-e', '']);
  return performance.now() - t0;
}

const stats = (values: number[]) => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });

export async function run(options: BenchOptions): Promise<BenchResult> {
  // A smoke run (whose figures mean nothing) takes the dist/ there is, as the suite has built it, and opens homes
  // that start from a migrated template when one is given (tempHome): it checks the benchmark, not the package.
  if (options.smoke && existsSync(fileURLToPath(ENTRY))) options.log('using the dist/ there is (smoke)');
  else {
    options.log('building dist/ (npm run build)');
    await exec(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: ROOT });
  }

  const importSamples = sized(options, { smoke: 1, quick: 7, full: 21 });
  const openSamples = sized(options, { smoke: 1, quick: 3, full: 7 });
  const bare: number[] = [];
  const imports: Sample[] = [];
  for (let i = 0; i < importSamples; i++) {
    bare.push(await bareNodeMs());
    imports.push(await sample());
  }
  const importMs = stats(imports.map((s) => s.importMs));
  options.log(`import('memfold'): median ${fmt(importMs.median)} ms (${importSamples} processes)`);

  const first: Sample[] = [];
  const second: Sample[] = [];
  for (let i = 0; i < openSamples; i++) {
    const home = options.smoke ? await tempHome('startup') : await tempDir('startup');
    try {
      first.push(await sample(home.dir));
      second.push(await sample(home.dir));
    } finally {
      await home.remove();
    }
    options.log(
      `open ${i + 1}/${openSamples}: first ${fmt(first[i]!.openMs)} ms, ${fmt(first[i]!.peakRssMiB)} MiB; second ${fmt(second[i]!.openMs)} ms, ${fmt(second[i]!.peakRssMiB)} MiB`,
    );
  }
  const row = (what: string, samples: Sample[], key: 'importMs' | 'openMs') => {
    const time = stats(samples.map((s) => s[key]!));
    const rss = stats(samples.map((s) => s.peakRssMiB));
    return [what, String(samples.length), fmt(time.median), fmt(time.min), fmt(time.max), fmt(rss.median), fmt(rss.max)];
  };

  const markdown = [
    `The compiled package (\`dist/\`), each sample a fresh \`node\` process. The first row, a bare \`node -e ''\` (the process started and exited), is for scale. Peak RSS is the whole process's.`,
    '',
    table(
      ['what', '>samples', '>median ms', '>min ms', '>max ms', '>peak RSS MiB (median)', '>peak RSS MiB (max)'],
      [
        ["bare `node -e ''`, for scale", String(bare.length), fmt(median(bare)), fmt(Math.min(...bare)), fmt(Math.max(...bare)), '', ''],
        row("import('memfold')", imports, 'importMs'),
        row('first createMemfold() + close, empty home', first, 'openMs'),
        row('second createMemfold() + close, same home', second, 'openMs'),
      ],
    ),
  ].join('\n');
  return {
    name: 'startup',
    title: 'Startup: import, first open of an empty home, second open',
    markdown,
    json: { bareNodeMs: bare, imports, firstOpen: first, secondOpen: second },
  };
}
