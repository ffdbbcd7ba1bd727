/**
 * Reading the PGlite directory lock (`pglite-lock-file.ts`): its generation files `memfold.lock.N`, the highest one's
 * holder or `free`, and removing the generations below one.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { MemfoldError } from '../../errors.js';

/** The lock files' common name: `memfold.lock.<generation>`. */
export const LOCK_FILE_NAME = 'memfold.lock';

/** What a lock file says of its holder. */
export interface LockHolder {
  pid: number;
  /** The holder's start time (clock ticks since boot), when recorded. */
  started?: string;
  /** The boot the holder ran in, when recorded. */
  boot?: string;
}

/** The directory's current (highest) lock generation: held, `free`, or unreadable (judged stale). */
export interface LockState {
  file: string;
  generation: number;
  /** Undefined when the generation is `free` or unreadable. */
  holder?: LockHolder;
  free: boolean;
}

/** Attempts before giving up when other processes keep taking generations meanwhile. */
export const ATTEMPTS = 5;
/** What a `free` generation holds. */
export const FREE = 'free';

/** The directory's current lock, read from its highest generation; undefined when it has none. */
export async function readDataDirLock(dataDir: string): Promise<LockState | undefined> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const highest = await highestGeneration(dataDir);
    if (highest === undefined) return undefined;
    let text: string;
    try {
      text = await readFile(highest.file, 'utf8');
    } catch (error) {
      // Removed between the listing and the read: a higher generation exists now.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      return { ...highest, free: false };
    }
    if (text.trim() === FREE) return { ...highest, free: true };
    const holder = parseHolder(text);
    return { ...highest, free: false, ...(holder ? { holder } : {}) };
  }
  throw new MemfoldError('busy', `PGlite data directory ${dataDir}: its lock changed hands ${ATTEMPTS} times while being read; try again`, {
    retryable: true,
    details: { dataDir },
  });
}

/** `pid [start boot]`, a dash for what was not known; a file of a pid alone is one an earlier version wrote. */
function parseHolder(text: string): LockHolder | undefined {
  const [pidText, started, boot] = text.trim().split(/\s+/);
  const pid = Number.parseInt(pidText ?? '', 10);
  if (!(Number.isSafeInteger(pid) && pid > 0)) return undefined;
  return { pid, ...(started && started !== '-' ? { started } : {}), ...(boot && boot !== '-' ? { boot } : {}) };
}

const GENERATION = /^memfold\.lock(?:\.(\d{1,15}))?$/;

export function generationOf(name: string): number | undefined {
  const match = GENERATION.exec(name);
  return match === null ? undefined : Number(match[1] ?? 0);
}

export function generationFile(dataDir: string, generation: number): string {
  return path.join(dataDir, `${LOCK_FILE_NAME}.${generation}`);
}

async function generations(dataDir: string): Promise<Array<{ file: string; generation: number }>> {
  let names: string[];
  try {
    names = await readdir(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names.flatMap((name) => {
    const generation = generationOf(name);
    return generation === undefined ? [] : [{ file: path.join(dataDir, name), generation }];
  });
}

export async function highestGeneration(dataDir: string): Promise<{ file: string; generation: number } | undefined> {
  let highest: { file: string; generation: number } | undefined;
  for (const entry of await generations(dataDir)) if (highest === undefined || entry.generation > highest.generation) highest = entry;
  return highest;
}

/** Older generations go only once a higher one exists, so the highest is never removed. */
export async function removeBelow(dataDir: string, generation: number): Promise<void> {
  for (const entry of await generations(dataDir)) if (entry.generation < generation) await rm(entry.file, { force: true });
}
