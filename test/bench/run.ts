/**
 * `npm run bench [-- --quick | --smoke] [--only overhead,latency] [--out bench-results/]`: runs the benchmarks in
 * order, prints each table, writes `<out>/<name>.json` and `<out>/summary.md`. `--smoke` runs each at its smallest
 * size, to show that it runs and reports (the suite does, `bench-smoke.integration.test.ts`); its figures mean nothing.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { fmt, machineInfo, machineLine, now, writeJson, type BenchModule, type BenchResult } from './bench-kit.js';

/** Every benchmark, in run order. Imported on demand, so `--only` loads only what it runs. */
export const BENCHMARKS: Record<string, () => Promise<BenchModule>> = {
  overhead: () => import('./overhead.js'),
  'summarizer-cost': () => import('./summarizer-cost.js'),
  'summary-prompts': () => import('./summary-prompts.js'),
  latency: () => import('./latency.js'),
  'memory-read-latency': () => import('./memory-read-latency.js'),
  'token-estimation': () => import('./token-estimation.js'),
  import: () => import('./import.js'),
  startup: () => import('./startup.js'),
  'extractive-quality': () => import('./extractive-quality.js'),
  'background-load': () => import('./background-load.js'),
};

function parse(argv: string[]): { quick: boolean; smoke: boolean; only: string[]; outDir: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      smoke: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string', default: 'bench-results' },
    },
  });
  const only = values.only
    ? values.only
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)
    : Object.keys(BENCHMARKS);
  const unknown = only.filter((name) => !(name in BENCHMARKS));
  if (unknown.length > 0) throw new Error(`--only: unknown benchmark ${unknown.join(', ')} (known: ${Object.keys(BENCHMARKS).join(', ')})`);
  // A smoke run is smaller still than a quick one: benchmarks that have no smoke size of their own take the quick one.
  const smoke = values.smoke ?? false;
  return {
    quick: (values.quick ?? false) || smoke,
    smoke,
    only: Object.keys(BENCHMARKS).filter((name) => only.includes(name)),
    outDir: path.resolve(values.out!),
  };
}

async function main(): Promise<void> {
  // LanceDB reads its log level when its native module loads: set it before any benchmark is imported.
  process.env.LANCEDB_LOG = 'error';
  const { quick, smoke, only, outDir } = parse(process.argv.slice(2));
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const machine = machineInfo();
  const log = (line: string) => console.log(`  ${line}`);
  const size = smoke ? ' (smoke)' : quick ? ' (quick)' : '';
  console.log(`memfold benchmarks${size}: ${only.join(', ')}`);
  console.log(`machine: ${machineLine(machine)}`);
  console.log(`PostgreSQL: ${databaseUrl ? 'DATABASE_URL' : 'unset (PGlite only)'}; results in ${outDir}\n`);

  const started = now();
  const done: Array<{ result: BenchResult; seconds: number }> = [];
  for (const name of only) {
    console.log(`## ${name}`);
    const t0 = now();
    const bench = await BENCHMARKS[name]!();
    const result = await bench.run({ quick, smoke, outDir, log, ...(databaseUrl ? { databaseUrl } : {}) });
    const seconds = (now() - t0) / 1000;
    await writeJson(path.join(outDir, `${result.name}.json`), { name: result.name, title: result.title, quick, smoke, seconds, machine, result: result.json });
    console.log(`\n### ${result.title}\n\n${result.markdown}\n\n(${fmt(seconds, 1)} s)\n`);
    done.push({ result, seconds });
  }
  const totalSeconds = (now() - started) / 1000;

  const summary = [
    `# memfold benchmarks${size}`,
    '',
    `Machine: ${machineLine(machine)}. PostgreSQL: ${databaseUrl ? 'yes' : 'no (PGlite only)'}. Total wall time: ${fmt(totalSeconds, 1)} s. ${new Date().toISOString()}`,
    ...done.flatMap(({ result, seconds }) => ['', `## ${result.title}`, '', result.markdown, '', `(${fmt(seconds, 1)} s)`]),
    '',
  ].join('\n');
  await writeFile(path.join(outDir, 'summary.md'), summary);
  console.log(`machine: ${machineLine(machine)}`);
  console.log(`total wall time: ${fmt(totalSeconds, 1)} s; summary in ${path.join(outDir, 'summary.md')}`);
}

// Run as a script; imported (by the smoke test, for the names), it only declares.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
