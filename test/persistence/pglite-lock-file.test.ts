import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import { LOCK_FILE_NAME, readDataDirLock } from '../../src/persistence/pglite/pglite-lock-file.js';
import { copyPgliteTemplate } from '../support/backends.js';

const run = promisify(execFile);
const fixture = path.join(import.meta.dirname, 'fixtures/open-pglite.ts');

/**
 * Open the store in another node process; resolves what it printed. `unprivileged`: file permissions apply to it even
 * when the tests run as root (which reads and writes anything), by dropping the capabilities that bypass them.
 */
async function openInChild(dataDir: string, { unprivileged = false } = {}): Promise<{ ok: boolean; code?: string; message?: string; seq?: number }> {
  const node = [process.execPath, '--import', 'tsx/esm', fixture, dataDir];
  const command = unprivileged && process.getuid?.() === 0 ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search,-fowner', ...node] : node;
  const { stdout } = await run(command[0]!, command.slice(1), { cwd: path.join(import.meta.dirname, '../..') });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

/** The pid the directory's current lock names (undefined when free). */
async function holderPid(dataDir: string): Promise<number | undefined> {
  return (await readDataDirLock(dataDir))?.holder?.pid;
}

/** The current lock's text: `pid start boot` (the start time and boot id where the system tells), or `free`. */
async function lockText(dataDir: string): Promise<string> {
  return (await readFile((await readDataDirLock(dataDir))!.file, 'utf8')).trim();
}

/** Put a holder (or any text) in place as the directory's newest lock generation, as a process that took it would. */
async function writeLock(dataDir: string, text: string): Promise<void> {
  const generation = (await readDataDirLock(dataDir))?.generation ?? 0;
  await writeFile(path.join(dataDir, `${LOCK_FILE_NAME}.${generation + 1}`), `${text}\n`);
}

/** A process's start time as `/proc/<pid>/stat` gives it (field 22). */
async function startOf(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** A pid that certainly belongs to no running process: one of a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('pglite: a data directory this process cannot write', () => {
  it('is refused as a persistence_error naming the directory and what to do, leaving nothing in it', async () => {
    const { root, dataDir } = await copyPgliteTemplate();
    const before = await readdir(dataDir);
    await chmod(dataDir, 0o555);
    try {
      const opened = await openInChild(dataDir, { unprivileged: true });
      expect(opened).toMatchObject({ ok: false, code: 'persistence_error' });
      expect(opened.message).toContain(`PGlite data directory ${dataDir}`);
      expect(opened.message).toContain('write access');
      expect(opened.message).not.toContain('draft');
      expect(await readdir(dataDir)).toEqual(before);
      // A new directory in a folder this process cannot write: the same refusal, naming the directory.
      const inside = path.join(dataDir, 'pg');
      const created = await openInChild(inside, { unprivileged: true });
      expect(created).toMatchObject({ ok: false, code: 'persistence_error' });
      expect(created.message).toContain(`PGlite data directory ${inside}: this process cannot write to it`);
    } finally {
      await chmod(dataDir, 0o755);
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('pglite: the data directory lock file', () => {
  let root: string;
  let dataDir: string;
  beforeEach(async () => {
    ({ root, dataDir } = await copyPgliteTemplate());
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('holds the pid while open, refuses another process with busy, and releases on close', async () => {
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      expect(await holderPid(dataDir)).toBe(process.pid);
      const refused = await openInChild(dataDir);
      expect(refused.ok).toBe(false);
      expect(refused.code).toBe('busy');
      expect(refused.message).toContain(dataDir);
      expect(refused.message).toContain(`process ${process.pid}`);
    } finally {
      await store.close();
    }
    expect(await lockText(dataDir)).toBe('free');
    // Once released, the other process opens it (and writes).
    expect(await openInChild(dataDir)).toEqual({ ok: true, seq: 1 });
    expect(await lockText(dataDir)).toBe('free');
  });

  it('refuses a second open in the same process', async () => {
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      await expect(createKyselyPersistence({ dialect: 'pglite', dataDir })).rejects.toMatchObject({
        code: 'busy',
        message: expect.stringContaining('this process'),
      });
      // The refused open did not take the lock away from the owner.
      expect(await holderPid(dataDir)).toBe(process.pid);
      expect(await store.append('c', [{ role: 'user', content: 'still mine' }])).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('refuses when the lock file names another live process', async () => {
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      await writeLock(dataDir, `${sleeper.pid}`);
      await expect(createKyselyPersistence({ dialect: 'pglite', dataDir })).rejects.toMatchObject({
        code: 'busy',
        details: { dataDir, pid: sleeper.pid },
        message: expect.stringContaining(`process ${sleeper.pid}`),
      });
      expect(await lockText(dataDir)).toBe(String(sleeper.pid));
    } finally {
      sleeper.kill();
    }
  });

  it('records the start time and boot id beside the pid', async () => {
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      const [pid, started, boot] = (await lockText(dataDir)).split(' ');
      expect(Number(pid)).toBe(process.pid);
      expect(started).toBe(await startOf(process.pid));
      expect(boot).toBe((await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim());
    } finally {
      await store.close();
    }
  });

  it('takes over a lock this pid left without closing: a process restarted with the same pid (pid 1 in a container)', async () => {
    await writeLock(dataDir, `${process.pid} 1 -`);
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      expect(await holderPid(dataDir)).toBe(process.pid);
      expect(await store.append('c', [{ role: 'user', content: 'mine now' }])).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('takes over a lock whose pid is alive but was reused (another start time, or another boot), and refuses the real holder', async () => {
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = await startOf(sleeper.pid!);
      const boot = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
      await writeLock(dataDir, `${sleeper.pid} ${started} ${boot}`);
      await expect(createKyselyPersistence({ dialect: 'pglite', dataDir })).rejects.toMatchObject({ code: 'busy', details: { pid: sleeper.pid } });
      for (const stale of [`${sleeper.pid} ${Number(started) - 1} ${boot}`, `${sleeper.pid} ${started} another-boot`]) {
        await writeLock(dataDir, stale);
        const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
        expect(await holderPid(dataDir)).toBe(process.pid);
        await store.close();
      }
    } finally {
      sleeper.kill();
    }
  });

  it('takes over a stale lock file whose process is dead', async () => {
    await writeLock(dataDir, `${await deadPid()}`);
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      expect(await holderPid(dataDir)).toBe(process.pid);
    } finally {
      await store.close();
    }
    expect(await lockText(dataDir)).toBe('free');
  });

  it('removes the lock drafts a process killed while taking or handing back the lock left behind', async () => {
    const dead = await deadPid();
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      const leftover = `${LOCK_FILE_NAME}.draft-${dead}-0b5e1c8a-2f44-4a0e-9a53-7d1c9a4e2b10`;
      // A live process's draft is its lock being written right now: it stays.
      const inFlight = `${LOCK_FILE_NAME}.draft-${sleeper.pid}-6f0e7d1c-3b2a-4c59-8e71-5a4b3c2d1e0f`;
      await writeFile(path.join(dataDir, leftover), `${dead}\n`);
      await writeFile(path.join(dataDir, inFlight), `${sleeper.pid}\n`);
      for (let cycle = 0; cycle < 3; cycle++) await (await createKyselyPersistence({ dialect: 'pglite', dataDir })).close();
      const drafts = (await readdir(dataDir)).filter((name) => name.includes('.draft-'));
      expect(drafts).toEqual([inFlight]);
    } finally {
      sleeper.kill();
    }
  });

  it('refuses two concurrent opens in this process: exactly one opens, and it keeps the lock', async () => {
    const opened = await Promise.allSettled([createKyselyPersistence({ dialect: 'pglite', dataDir }), createKyselyPersistence({ dialect: 'pglite', dataDir })]);
    const stores = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    try {
      expect(stores).toHaveLength(1);
      expect(opened.find((result) => result.status === 'rejected')).toMatchObject({
        reason: { code: 'busy', message: expect.stringContaining(`${dataDir} is already open in this process`) },
      });
      expect(await holderPid(dataDir)).toBe(process.pid);
      expect(await stores[0]!.append('c', [{ role: 'user', content: 'mine' }])).toHaveLength(1);
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it('refuses a lock naming this very process (same pid and start time) that this copy of memfold does not hold', async () => {
    const boot = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
    await writeLock(dataDir, `${process.pid} ${await startOf(process.pid)} ${boot}`);
    await expect(createKyselyPersistence({ dialect: 'pglite', dataDir })).rejects.toMatchObject({
      code: 'busy',
      message: expect.stringContaining('already open in this process'),
    });
  });
});

/** A child process that takes and releases locks on command (fixtures/lock-racer.ts). */
interface Racer {
  send(line: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

async function startRacer(): Promise<Racer> {
  const child = spawn(process.execPath, ['--import', 'tsx/esm', racerFixture], {
    cwd: path.join(import.meta.dirname, '../..'),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting: Array<(line: Record<string, unknown>) => void> = [];
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      waiting.shift()?.(JSON.parse(line));
    }
  });
  const next = () => new Promise<Record<string, unknown>>((resolve) => waiting.push(resolve));
  await next();
  return {
    send(line) {
      const answer = next();
      child.stdin.write(`${line}\n`);
      return answer;
    },
    close: () =>
      new Promise((resolve) => {
        child.on('exit', () => resolve());
        child.stdin.end();
      }),
  };
}

const racerFixture = path.join(import.meta.dirname, 'fixtures/lock-racer.ts');

describe('pglite: the lock file across processes racing a stale lock', () => {
  it('lets exactly one of six processes take it over, trial after trial', async () => {
    const racers = await Promise.all(Array.from({ length: 6 }, startRacer));
    const root = await mkdtemp(path.join(os.tmpdir(), 'memfold-lock-race-'));
    try {
      const stale = `${await deadPid()}\n`;
      for (let trial = 0; trial < 25; trial++) {
        const dataDir = path.join(root, String(trial));
        await mkdir(dataDir);
        // Half the trials start from an earlier version's file, half from a stale generation.
        await writeFile(path.join(dataDir, trial % 2 === 0 ? LOCK_FILE_NAME : `${LOCK_FILE_NAME}.7`), stale);
        const answers = await Promise.all(racers.map((racer) => racer.send(`take ${dataDir}`)));
        expect(
          answers.filter((answer) => answer.took === true),
          `trial ${trial}`,
        ).toHaveLength(1);
        expect(answers.filter((answer) => answer.took !== true).map((answer) => answer.code)).toEqual(Array(5).fill('busy'));
        await Promise.all(racers.map((racer) => racer.send('release')));
        expect((await readDataDirLock(dataDir))?.free).toBe(true);
      }
    } finally {
      await Promise.all(racers.map((racer) => racer.close()));
      await rm(root, { recursive: true, force: true });
    }
  });
});
