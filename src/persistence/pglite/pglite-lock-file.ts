/**
 * One process owns a PGlite data directory (two would corrupt it). The owner keeps
 * `memfold.lock` in the directory, holding its pid; a file whose pid is dead is stale and taken over.
 */
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { MemfoldError } from '../../errors.js';

export const LOCK_FILE_NAME = 'memfold.lock';

export interface DataDirLock {
  readonly file: string;
  /** Remove the lock file if it is still ours. */
  release(): Promise<void>;
}

/** Take the directory's lock or throw MemfoldError('busy') naming the directory and the holder's pid. */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE_NAME);
  const mine = String(process.pid);
  // Write the pid to a private file, then hard-link it into place: the lock appears with its
  // content in one step, so no reader ever sees an empty lock file.
  const draft = path.join(dataDir, `${LOCK_FILE_NAME}.${randomUUID()}`);
  await writeFile(draft, `${mine}\n`);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await link(draft, file);
        return { file, release: () => releaseIfMine(file, mine) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await readPid(file);
      if (holder !== undefined && isAlive(holder)) throw busy(dataDir, file, holder);
      // Stale (dead pid or unreadable): remove it and try again.
      await rm(file, { force: true });
    }
    throw busy(dataDir, file, await readPid(file));
  } finally {
    await rm(draft, { force: true });
  }
}

function busy(dataDir: string, file: string, pid: number | undefined): MemfoldError {
  const who = pid === undefined ? 'another process' : pid === process.pid ? `this process (pid ${pid})` : `process ${pid}`;
  return new MemfoldError(
    'busy',
    `PGlite data directory ${dataDir} is in use by ${who}: one process owns a PGlite directory. ` +
      `Close the other store, use PostgreSQL (DATABASE_URL) to share one, or delete ${file} if that process is not memfold.`,
    { retryable: true, details: { dataDir, lockFile: file, pid } },
  );
}

async function readPid(file: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt((await readFile(file, 'utf8')).trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Signal 0 checks existence; EPERM means the process exists but belongs to another user. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function releaseIfMine(file: string, mine: string): Promise<void> {
  const holder = await readPid(file);
  if (holder !== undefined && String(holder) === mine) await rm(file, { force: true });
}
