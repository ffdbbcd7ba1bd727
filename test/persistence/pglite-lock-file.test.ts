import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import { LOCK_FILE_NAME } from '../../src/persistence/pglite/pglite-lock-file.js';
import { copyPgliteTemplate } from '../support/backends.js';

const run = promisify(execFile);
const fixture = path.join(import.meta.dirname, 'fixtures/open-pglite.ts');

/** Open the store in another node process; resolves what it printed. */
async function openInChild(dataDir: string): Promise<{ ok: boolean; code?: string; message?: string; seq?: number }> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx/esm', fixture, dataDir], { cwd: path.join(import.meta.dirname, '../..') });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

/** The pid a lock file names (its first field; the start time and boot id follow where the system tells). */
async function holderPid(file: string): Promise<number> {
  return Number((await readFile(file, 'utf8')).trim().split(/\s+/)[0]);
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

describe('pglite: the data directory lock file', () => {
  let root: string;
  let dataDir: string;
  let lockFile: string;
  beforeEach(async () => {
    ({ root, dataDir } = await copyPgliteTemplate());
    lockFile = path.join(dataDir, LOCK_FILE_NAME);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('holds the pid while open, refuses another process with busy, and releases on close', async () => {
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      expect(await holderPid(lockFile)).toBe(process.pid);
      const refused = await openInChild(dataDir);
      expect(refused.ok).toBe(false);
      expect(refused.code).toBe('busy');
      expect(refused.message).toContain(dataDir);
      expect(refused.message).toContain(`process ${process.pid}`);
    } finally {
      await store.close();
    }
    expect(existsSync(lockFile)).toBe(false);
    // Once released, the other process opens it (and writes).
    expect(await openInChild(dataDir)).toEqual({ ok: true, seq: 1 });
    expect(existsSync(lockFile)).toBe(false);
  });

  it('refuses a second open in the same process', async () => {
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      await expect(createKyselyPersistence({ dialect: 'pglite', dataDir })).rejects.toMatchObject({
        code: 'busy',
        message: expect.stringContaining('this process'),
      });
      // The refused open did not take the lock away from the owner.
      expect(await holderPid(lockFile)).toBe(process.pid);
      expect(await store.append('c', [{ role: 'user', content: 'still mine' }])).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('refuses when the lock file names another live process', async () => {
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      await writeFile(lockFile, `${sleeper.pid}\n`);
      await expect(createKyselyPersistence({ dialect: 'pglite', dataDir })).rejects.toMatchObject({
        code: 'busy',
        details: { dataDir, pid: sleeper.pid },
        message: expect.stringContaining(`process ${sleeper.pid}`),
      });
      expect((await readFile(lockFile, 'utf8')).trim()).toBe(String(sleeper.pid));
    } finally {
      sleeper.kill();
    }
  });

  it('records the start time and boot id beside the pid', async () => {
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      const [pid, started, boot] = (await readFile(lockFile, 'utf8')).trim().split(' ');
      expect(Number(pid)).toBe(process.pid);
      expect(started).toBe(await startOf(process.pid));
      expect(boot).toBe((await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim());
    } finally {
      await store.close();
    }
  });

  it('takes over a lock this pid left without closing: a process restarted with the same pid (pid 1 in a container)', async () => {
    await writeFile(lockFile, `${process.pid} 1 -\n`);
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      expect(await holderPid(lockFile)).toBe(process.pid);
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
      await writeFile(lockFile, `${sleeper.pid} ${started} ${boot}\n`);
      await expect(createKyselyPersistence({ dialect: 'pglite', dataDir })).rejects.toMatchObject({ code: 'busy', details: { pid: sleeper.pid } });
      for (const stale of [`${sleeper.pid} ${Number(started) - 1} ${boot}`, `${sleeper.pid} ${started} another-boot`]) {
        await writeFile(lockFile, `${stale}\n`);
        const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
        expect(await holderPid(lockFile)).toBe(process.pid);
        await store.close();
      }
    } finally {
      sleeper.kill();
    }
  });

  it('takes over a stale lock file whose process is dead', async () => {
    await writeFile(lockFile, `${await deadPid()}\n`);
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      expect(await holderPid(lockFile)).toBe(process.pid);
    } finally {
      await store.close();
    }
    expect(existsSync(lockFile)).toBe(false);
  });
});
