/**
 * What a program pays before its first compaction, on the compiled package (`dist/`, built first, as
 * `npm install` builds it): a cold `import('memfold')`, the first `createMemfold()` on an empty home
 * (PGlite's data directory unpacked from the template the build ships, then any newer migration; the LanceDB
 * folder made) and a second open of the same home.
 * Every sample is a fresh `node` process with no loader, so each time is cold and each peak RSS its own. CPU time
 * (user + system, all threads) is recorded beside the wall time: on shared cores it is inflated less.
 * With `MEMFOLD_BENCH_STARTUP_BASELINE` (the root of another built copy of the package, e.g. the previous commit's),
 * every sample is also taken on it, alternating, so before and after share the same load.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { fmt, median, sized, table, tempDir, tempHome, type BenchOptions, type BenchResult } from './bench-kit.js';

const exec = promisify(execFile);
const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const entryOf = (root: string) => pathToFileURL(path.join(root, 'dist/src/index.js')).href;
const ENTRY = entryOf(ROOT);

interface Sample {
  /** `import('memfold')`, ms. */
  importMs: number;
  /** `createMemfold()` then `close()`, ms; absent for import-only samples. */
  openMs?: number;
  /** CPU time (user + system) of the import, and of the open with its close, ms. */
  importCpuMs: number;
  openCpuMs?: number;
  /** The process's peak RSS, MiB. */
  peakRssMiB: number;
}

/** A child that imports the package, optionally opens (and closes) a memfold on `home`, and prints a Sample. */
function childScript(entry: string, home: string | undefined): string {
  return `
const cpu = (from) => { const now = process.cpuUsage(from); return (now.user + now.system) / 1000; };
const c0 = process.cpuUsage();
const t0 = performance.now();
const memfold = await import(${JSON.stringify(entry)});
const importMs = performance.now() - t0;
const importCpuMs = cpu(c0);
let openMs, openCpuMs;
if (${JSON.stringify(home ?? null)} !== null) {
  const c1 = process.cpuUsage();
  const t1 = performance.now();
  const m = await memfold.createMemfold({ env: { MEMFOLD_HOME: ${JSON.stringify(home ?? '')} } });
  await m.close();
  openMs = performance.now() - t1;
  openCpuMs = cpu(c1);
}
console.log(JSON.stringify({ importMs, importCpuMs, openMs, openCpuMs, peakRssMiB: process.resourceUsage().maxRSS / 1024 }));
process.exit(0);
`;
}

async function sample(entry: string, home?: string): Promise<Sample> {
  // LANCEDB_LOG as the bin sets it; the library itself sets nothing.
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', childScript(entry, home)], {
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

interface Samples {
  /** `this package`, or `baseline` (MEMFOLD_BENCH_STARTUP_BASELINE). */
  label: string;
  entry: string;
  imports: Sample[];
  first: Sample[];
  second: Sample[];
}

/** The packages measured: this one, and the baseline's when MEMFOLD_BENCH_STARTUP_BASELINE names one. */
function packages(): Samples[] {
  const ours: Samples = { label: 'this package', entry: ENTRY, imports: [], first: [], second: [] };
  const baseline = process.env.MEMFOLD_BENCH_STARTUP_BASELINE;
  if (!baseline) return [ours];
  const entry = entryOf(path.resolve(baseline));
  if (!existsSync(fileURLToPath(entry))) throw new Error(`MEMFOLD_BENCH_STARTUP_BASELINE: no ${fileURLToPath(entry)} (build it first)`);
  return [{ label: 'baseline', entry, imports: [], first: [], second: [] }, ours];
}

/** First and second open of a new home, for each package in turn, `count` times. */
async function sampleOpens(options: BenchOptions, measured: Samples[], count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    for (const each of measured) {
      const home = options.smoke ? await tempHome('startup') : await tempDir('startup');
      try {
        each.first.push(await sample(each.entry, home.dir));
        each.second.push(await sample(each.entry, home.dir));
      } finally {
        await home.remove();
      }
      const [first, second] = [each.first[i]!, each.second[i]!];
      options.log(
        `open ${i + 1}/${count} (${each.label}): first ${fmt(first.openMs)} ms, CPU ${fmt(first.openCpuMs)} ms, ${fmt(first.peakRssMiB)} MiB; ` +
          `second ${fmt(second.openMs)} ms, CPU ${fmt(second.openCpuMs)} ms, ${fmt(second.peakRssMiB)} MiB`,
      );
    }
  }
}

function rows(each: Samples, named: (what: string) => string): string[][] {
  const row = (what: string, samples: Sample[], key: 'import' | 'open') => {
    const time = stats(samples.map((s) => s[`${key}Ms`]!));
    const cpu = stats(samples.map((s) => s[`${key}CpuMs`]!));
    const rss = stats(samples.map((s) => s.peakRssMiB));
    return [named(what), String(samples.length), fmt(time.median), fmt(time.min), fmt(time.max), fmt(cpu.median), fmt(rss.median), fmt(rss.max)];
  };
  return [
    row("import('memfold')", each.imports, 'import'),
    row('first createMemfold() + close, empty home', each.first, 'open'),
    row('second createMemfold() + close, same home', each.second, 'open'),
  ];
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  // A smoke run (whose figures mean nothing) takes the dist/ there is, as the suite has built it, and opens homes
  // that start from a migrated template when one is given (tempHome): it checks the benchmark, not the package.
  if (options.smoke && existsSync(fileURLToPath(ENTRY))) options.log('using the dist/ there is (smoke)');
  else {
    options.log('building dist/ (npm run build)');
    await exec(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: ROOT });
  }
  const measured = packages();
  const importSamples = sized(options, { smoke: 1, quick: 7, full: 21 });
  const bare: number[] = [];
  for (let i = 0; i < importSamples; i++) {
    bare.push(await bareNodeMs());
    for (const each of measured) each.imports.push(await sample(each.entry));
  }
  for (const each of measured)
    options.log(`import('memfold') (${each.label}): median ${fmt(median(each.imports.map((s) => s.importMs)))} ms (${importSamples} processes)`);
  await sampleOpens(options, measured, sized(options, { smoke: 1, quick: 3, full: 7 }));

  const named = (each: Samples) => (what: string) => (measured.length > 1 ? `${each.label}: ${what}` : what);
  const markdown = [
    `The compiled package (\`dist/\`), each sample a fresh \`node\` process${measured.length > 1 ? ', alternating with the baseline package' : ''}. The first row, a bare \`node -e ''\` (the process started and exited), is for scale. Peak RSS is the whole process's; CPU is its user + system time, all threads.`,
    '',
    table(
      ['what', '>samples', '>median ms', '>min ms', '>max ms', '>median CPU ms', '>peak RSS MiB (median)', '>peak RSS MiB (max)'],
      [
        ["bare `node -e ''`, for scale", String(bare.length), fmt(median(bare)), fmt(Math.min(...bare)), fmt(Math.max(...bare)), '', '', ''],
        ...measured.flatMap((each) => rows(each, named(each))),
      ],
    ),
  ].join('\n');
  const json = (each: Samples) => ({ imports: each.imports, firstOpen: each.first, secondOpen: each.second });
  const ours = measured[measured.length - 1]!;
  return {
    name: 'startup',
    title: 'Startup: import, first open of an empty home, second open',
    markdown,
    json: { bareNodeMs: bare, ...json(ours), ...(measured.length > 1 ? { baseline: json(measured[0]!) } : {}) },
  };
}
