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
      expect((await readFile(lockFile, 'utf8')).trim()).toBe(String(process.pid));
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
      expect((await readFile(lockFile, 'utf8')).trim()).toBe(String(process.pid));
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

  it('takes over a stale lock file whose process is dead', async () => {
    await writeFile(lockFile, `${await deadPid()}\n`);
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir });
    try {
      expect((await readFile(lockFile, 'utf8')).trim()).toBe(String(process.pid));
    } finally {
      await store.close();
    }
    expect(existsSync(lockFile)).toBe(false);
  });
});
