/**
 * Shared helpers of the benchmarks: the module contract (`run(options) -> BenchResult`), markdown
 * tables, statistics, timing, RSS sampling, temp folders, a throwaway PostgreSQL database, JSON output,
 * and a synthetic conversation (prose with tool calls and JSON results).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { NewMessage } from '../../src/conversation/types.js';
import { seeded } from '../../src/cli/demo/demo-conversation.js';

export interface BenchOptions {
  /** Smaller sizes, for a run of a few minutes. */
  quick: boolean;
  /** The smallest sizes (`quick` is set too): the benchmark runs and reports, its figures mean nothing. */
  smoke?: boolean;
  /** Where results are written (run.ts writes `<name>.json` and `summary.md`). */
  outDir: string;
  /** PostgreSQL server; benchmarks that use it create and drop their own database. Unset: PGlite only. */
  databaseUrl?: string;
  /** Progress lines. */
  log: (line: string) => void;
}

export interface BenchResult {
  /** File-safe id, e.g. `overhead` (the `--only` name). */
  name: string;
  title: string;
  /** Tables and notes, printed and gathered in summary.md. */
  markdown: string;
  /** Raw figures, written to `<name>.json`. */
  json: unknown;
}

export type BenchModule = { run(options: BenchOptions): Promise<BenchResult> };

/** The value for the run's size: `smoke` (the smallest), `quick` or `full`. */
export function sized<T>(options: Pick<BenchOptions, 'quick' | 'smoke'>, sizes: { smoke: T; quick: T; full: T }): T {
  return options.smoke ? sizes.smoke : options.quick ? sizes.quick : sizes.full;
}

// ---- statistics -------------------------------------------------------------------------------

export function mean(values: readonly number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

// ---- formatting -------------------------------------------------------------------------------

/** A number with `digits` decimals and thousands separators; `—` for NaN or undefined. */
export function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function pct(value: number | undefined, digits = 1): string {
  return value === undefined || !Number.isFinite(value) ? '—' : `${fmt(value * 100, digits)}%`;
}

/** A markdown table; columns whose header starts with `>` are right-aligned (the `>` is dropped). */
export function table(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const right = headers.map((h) => h.startsWith('>'));
  const names = headers.map((h) => (h.startsWith('>') ? h.slice(1) : h));
  const cells = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? fmt(cell) : cell)));
  const widths = names.map((name, i) => Math.max(3, name.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]) => `| ${row.map((cell, i) => (right[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (right[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(names), rule, ...cells.map(line)].join('\n');
}

// ---- timing and memory ------------------------------------------------------------------------

export const now = (): number => performance.now();

/** Runs `fn` and returns its value with the wall time in ms. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = now();
  const value = await fn();
  return { value, ms: now() - t0 };
}

const MiB = 1024 * 1024;

/** Samples the RSS every `intervalMs` from now until `stop()`, which returns the peak in MiB. */
export function startRssSampler(intervalMs = 50): { stop(): number } {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage.rss()) / MiB;
    },
  };
}

/** The process's peak RSS so far, in MiB. */
export function maxRssMiB(): number {
  return (process.resourceUsage().maxRSS * 1024) / MiB;
}

// ---- machine ----------------------------------------------------------------------------------

export interface MachineInfo {
  cpu: string;
  cores: number;
  ramGiB: number;
  node: string;
  platform: string;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    ramGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
  };
}

export function machineLine(info: MachineInfo = machineInfo()): string {
  return `${info.cpu}, ${info.cores} cores, ${info.ramGiB} GiB RAM, Node ${info.node}, ${info.platform}`;
}

// ---- places -----------------------------------------------------------------------------------

/** A fresh temp folder and its remover. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `memfold-bench-${prefix}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A fresh home folder. With `MEMFOLD_BENCH_PGLITE_TEMPLATE` (a closed, migrated PGlite data directory: the smoke run
 * in the suite passes the tests' template), its `pg/` starts as a copy of it, so opening it skips PGlite's `initdb`
 * (seconds). Child processes inherit the variable.
 */
export async function tempHome(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const home = await tempDir(prefix);
  const template = process.env.MEMFOLD_BENCH_PGLITE_TEMPLATE;
  if (template) await cp(template, path.join(home.dir, 'pg'), { recursive: true });
  return home;
}

/** Create an empty database `memfold_bench_<random>` on the server at `databaseUrl`; returns its URL and a dropper. */
export async function createBenchDatabase(databaseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `memfold_bench_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

export async function writeJson(file: string, data: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(data, null, 2)}\n`);
}

// ---- a synthetic conversation ------------------------------------------------------------------

const WORDS = (
  'order refund delivery invoice account password flight booking seat baggage hotel invoice parser build test deploy ' +
  'kitchen recipe garden running knee marathon lisbon novel library meeting budget report quarter tuesday friday ' +
  'yesterday morning evening price discount warehouse courier address postcode ticket support manager schedule'
).split(' ');

function sentence(random: () => number, words: number): string {
  const picked = Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]!);
  if (random() < 0.5) picked.splice(1 + Math.floor(random() * (words - 1)), 0, `#${Math.floor(random() * 100_000)}`);
  const text = picked.join(' ');
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

function prose(random: () => number, sentences: number): string {
  return Array.from({ length: sentences }, () => sentence(random, 6 + Math.floor(random() * 10))).join(' ');
}

/**
 * Message `k` of the conversation, the same whatever the batch it is appended in. Groups of four, each a
 * whole number of turns: user, assistant, user, assistant; or user, assistant with a tool call, tool result, assistant.
 */
export function syntheticMessage(k: number): NewMessage {
  const random = seeded(k + 1);
  const createdAt = new Date(Date.UTC(2024, 0, 1) + k * 30_000).toISOString();
  const group = Math.floor(k / 4);
  const position = k % 4;
  const callId = `call_${group}`;
  if (group % 2 === 1 && position === 1) {
    const args = JSON.stringify({ order_id: `ORD-${group}`, fields: ['status', 'items', 'courier'] });
    return { role: 'assistant', content: '', toolCalls: [{ id: callId, type: 'function', function: { name: 'get_order', arguments: args } }], createdAt };
  }
  if (group % 2 === 1 && position === 2) {
    const items = Array.from({ length: 3 + Math.floor(random() * 4) }, (_, i) => ({
      sku: `SKU-${group}-${i}`,
      name: sentence(random, 3),
      price: Math.round(random() * 20_000) / 100,
    }));
    return { role: 'tool', toolCallId: callId, content: JSON.stringify({ order_id: `ORD-${group}`, status: 'shipped', courier: 'DHL', items }), createdAt };
  }
  const role = position % 2 === 0 ? 'user' : 'assistant';
  return { role, content: prose(random, role === 'user' ? 2 : 4), createdAt };
}

/** Messages `from` .. `from + count - 1`; a count that is a multiple of 4 ends on a turn boundary. */
export function syntheticMessages(from: number, count: number): NewMessage[] {
  return Array.from({ length: count }, (_, i) => syntheticMessage(from + i));
}

/**
 * Run a benchmark module again as a child process (same loader flags), so that a case's peak RSS and
 * timings are its own: `moduleUrl` gets `args`, and its last stdout line is the JSON result.
 */
export function runInChild<T>(moduleUrl: string, args: readonly string[], options: BenchOptions, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(moduleUrl), ...args], {
      env: { ...process.env, MEMFOLD_BENCH_DATABASE_URL: options.databaseUrl ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last) as T);
      else reject(new Error(`${what} exited with ${code}: ${stderr.trim().slice(-2000)}`));
    });
  });
}
