/**
 * The `memfold` command beside a running app on the embedded default: a child process (the built `dist/`) holds the
 * home's PGlite store, having archived a conversation. `search`, `inspect` (text, `--json`, `--html`) and `export`
 * then answer from the LanceDB archive alone, read-only, with one line on stderr saying so, and change no file of the
 * archive; `list` and `context` still refuse, with a message naming the holder and what works beside it. Real
 * processes: the app and each command run as their own node processes (`bin/memfold.js`; `npm run build` first).
 */
import { type ChildProcessByStdio, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyPgliteTemplateTo } from '../support/backends.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
const APP = new URL('./fixtures/hold-embedded-store.mjs', import.meta.url).pathname;
/** Bounds for a hang, not speeds: the app opens PGlite and compacts; a command starts node and opens LanceDB. */
const READY_WITHIN_MS = 120_000;
const COMMAND_WITHIN_MS = 60_000;

let home: string;
let app: ChildProcessByStdio<Writable, Readable, Readable>;
let appPid: number;
let archiveBefore: string[];

/** Every file of the archive folder with its size and modification time: what a write would change. */
async function archiveFiles(): Promise<string[]> {
  const dir = path.join(home, 'lancedb');
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
  return (await Promise.all(files.map(async (file) => `${path.relative(dir, file)} ${(await stat(file)).size} ${(await stat(file)).mtimeMs}`))).sort();
}

/** The app's `ready <pid>` line, or a rejection with what it said when it exits first or takes too long. */
async function readyLine(child: ChildProcessByStdio<Writable, Readable, Readable>): Promise<number> {
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout });
  const ready = new Promise<number>((resolve) => lines.on('line', (line) => /^ready (\d+)$/.test(line) && resolve(Number(line.split(' ')[1]))));
  const exited = once(child, 'exit').then(([code]) => Promise.reject(new Error(`the app exited (${code}) before it was ready: ${stderr}`)));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the app was not ready within ${READY_WITHIN_MS} ms: ${stderr}`)), READY_WITHIN_MS);
  });
  try {
    return await Promise.race([ready, exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function memfold(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, MEMFOLD_HOME: home };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: COMMAND_WITHIN_MS, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** The one notice line of a command run from the archive alone. */
const notice = (command: string) =>
  `memfold ${command}: the embedded store is in use by process ${appPid}: showing the archive only (read-only; live messages left out)\n`;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'memfold-beside-'));
  copyPgliteTemplateTo(path.join(home, 'pg'));
  app = spawn(process.execPath, [APP, home, 'beside'], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  appPid = await readyLine(app);
  expect(appPid).toBe(app.pid);
  archiveBefore = await archiveFiles();
}, READY_WITHIN_MS + 10_000);

afterAll(async () => {
  if (app && app.exitCode === null) {
    // Stdin ending is the app's signal to close its store; a kill is the bound.
    const exited = once(app, 'exit');
    app.stdin.end();
    const timer = setTimeout(() => app.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
  if (home) await rm(home, { recursive: true, force: true });
}, 40_000);

describe('memfold beside an app holding the embedded store', () => {
  it('search answers from the archive, saying so in one line', async () => {
    const { code, stdout, stderr } = await memfold('search', 'ORD-505', '--conversation', 'beside');
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('ORD-505');
    expect(stderr).toBe(notice('search'));
  });

  it('inspect prints the batch tree and says the live sessions were not read; --json marks the report archiveOnly', async () => {
    const text = await memfold('inspect', 'beside');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/depth 0/);
    expect(text.stdout).toContain('live sessions: not read (the embedded store is in use)');
    expect(text.stderr).toBe(notice('inspect'));

    const json = await memfold('inspect', 'beside', '--json');
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as { conversationId: string; batches: Array<{ label: string; depth: number }>; archiveOnly: boolean };
    expect(report.archiveOnly).toBe(true);
    expect(report.batches.length).toBeGreaterThan(0);
  });

  it('inspect --html writes the page of the archived batches', async () => {
    const file = path.join(home, 'timeline.html');
    const { code, stdout, stderr } = await memfold('inspect', 'beside', '--html', file);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^wrote .*timeline\.html: [1-9]\d* batch(es)? of conversation beside\n$/);
    expect(stderr).toBe(notice('inspect'));
    expect(await readFile(file, 'utf8')).toContain('ORD-505');
  });

  it('export writes the archived records, the header marked archiveOnly, no live rows', async () => {
    const { code, stdout, stderr } = await memfold('export', 'beside');
    expect(code, stderr).toBe(0);
    expect(stderr).toBe(notice('export'));
    const records = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; archiveOnly?: boolean; message?: { content: string } });
    expect(records[0]).toMatchObject({ kind: 'conversation', conversationId: 'beside', archiveOnly: true });
    const kinds = new Set(records.map((record) => record.kind));
    expect(kinds).toEqual(new Set(['conversation', 'summary', 'segment', 'archived_message']));
    expect(records.some((record) => record.message?.content.includes('ORD-505'))).toBe(true);
  });

  it('list and context still refuse, naming the holder and what runs beside it', async () => {
    for (const args of [['list'], ['context', 'beside']]) {
      const { code, stdout, stderr } = await memfold(...args);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toContain(`is in use by process ${appPid}`);
      expect(stderr).toContain('`memfold search`, `inspect` and `export` read the archive alone');
      expect(stderr).toContain('`memfold mcp --read-only`');
      expect(stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('leaves every file of the archive as it was', async () => {
    expect(await archiveFiles()).toEqual(archiveBefore);
  });
});
