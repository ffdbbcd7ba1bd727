/**
 * One process owns a PGlite data directory (two would corrupt it). The owner keeps `memfold.lock` in the directory:
 * its pid, and, where the system tells (Linux `/proc`), the process's start time and the boot id, so a pid reused
 * after a crash or a reboot (a container's app is always pid 1) does not pass for the owner. A file whose holder is
 * gone is stale and taken over. This process's own locks are also kept in memory: a second open of a directory it
 * holds is refused as such; a file naming this pid that it does not hold was left by an earlier process.
 */
import { readFileSync } from 'node:fs';
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

/** The lock files this process holds, by path: a file naming our pid that is not here is an earlier process's. */
const held = new Set<string>();

/** What a lock file says of its holder. */
interface Holder {
  pid: number;
  /** The holder's start time (clock ticks since boot), when recorded. */
  started?: string;
  /** The boot the holder ran in, when recorded. */
  boot?: string;
}

/** Take the directory's lock or throw MemfoldError('busy') naming the directory and the holder's pid. */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const file = path.resolve(dataDir, LOCK_FILE_NAME);
  if (held.has(file)) throw busy(dataDir, file, process.pid);
  const mine = String(process.pid);
  // Write the holder to a private file, then hard-link it into place: the lock appears with its
  // content in one step, so no reader ever sees an empty lock file.
  const draft = path.join(dataDir, `${LOCK_FILE_NAME}.${randomUUID()}`);
  await writeFile(draft, `${[mine, processStart(process.pid) ?? '-', bootId() ?? '-'].join(' ')}\n`);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await link(draft, file);
        held.add(file);
        return {
          file,
          release: async () => {
            held.delete(file);
            await releaseIfMine(file, mine);
          },
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await readHolder(file);
      if (holder !== undefined && holdsIt(holder)) throw busy(dataDir, file, holder.pid);
      // Stale (its holder gone, or unreadable): remove it and try again.
      await rm(file, { force: true });
    }
    throw busy(dataDir, file, (await readHolder(file))?.pid);
  } finally {
    await rm(draft, { force: true });
  }
}

/**
 * Whether the process a lock file names still holds it: not this process (whose own locks are in `held`), alive,
 * in this boot, and started when the file says (a pid can be reused).
 */
function holdsIt(holder: Holder): boolean {
  if (holder.pid === process.pid) return false;
  if (!isAlive(holder.pid)) return false;
  const boot = bootId();
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return false;
  const started = processStart(holder.pid);
  return holder.started === undefined || started === undefined || holder.started === started;
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

/** `pid [start boot]`, a dash for what was not known; a file of a pid alone is one an earlier version wrote. */
async function readHolder(file: string): Promise<Holder | undefined> {
  try {
    const [pidText, started, boot] = (await readFile(file, 'utf8')).trim().split(/\s+/);
    const pid = Number.parseInt(pidText ?? '', 10);
    if (!(Number.isSafeInteger(pid) && pid > 0)) return undefined;
    return { pid, ...(started && started !== '-' ? { started } : {}), ...(boot && boot !== '-' ? { boot } : {}) };
  } catch {
    return undefined;
  }
}

/** A process's start time in clock ticks since boot (`/proc/<pid>/stat`, field 22), where the system tells. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** This boot's id (Linux), so a lock written before a reboot is never taken for a live one. */
function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
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
  const holder = await readHolder(file);
  if (holder !== undefined && String(holder.pid) === mine) await rm(file, { force: true });
}
