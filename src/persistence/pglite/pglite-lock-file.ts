/**
 * One process owns a PGlite data directory (two would corrupt it). The owner records itself in a lock file in the
 * directory: its pid and, where the system tells (Linux `/proc`), the process's start time and the boot id, so a pid
 * reused after a crash or a reboot (a container's app is always pid 1) does not pass for the owner.
 *
 * The lock is a chain of generations: `memfold.lock.1`, `memfold.lock.2`, … (`memfold.lock`, an earlier version's
 * file, counts as generation 0). The highest one says who holds the directory, or `free`. Every change of owner
 * creates the next generation with an exclusive `link()`, which exactly one process wins, so taking over a stale
 * lock is atomic across processes; a file is removed only once a higher one exists (the highest never is), and a
 * taker checks after its link that no higher generation got in first. Closing writes a `free` generation.
 *
 * In this process, the directories open are kept in a registry shared by every copy of this module
 * (`globalThis`), reserved before the first await: a second open, concurrent or not, is refused at once.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MemfoldError } from '../../errors.js';

/** The lock files' common name: `memfold.lock.<generation>`. */
export const LOCK_FILE_NAME = 'memfold.lock';

export interface DataDirLock {
  /** The generation file this open wrote. */
  readonly file: string;
  /** Hand the directory back: write the next generation as `free`. Never throws for a directory already gone. */
  release(): Promise<void>;
}

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

/** Directories open in this process (resolved paths), shared by every copy of this module. */
const REGISTRY_KEY = Symbol.for('memfold.pglite.openDataDirs');
function openHere(): Set<string> {
  const scope = globalThis as { [REGISTRY_KEY]?: Set<string> };
  scope[REGISTRY_KEY] ??= new Set<string>();
  return scope[REGISTRY_KEY];
}

/** Attempts before giving up when other processes keep taking generations meanwhile. */
const ATTEMPTS = 5;
const FREE = 'free';

/** Take the directory's lock or throw MemfoldError('busy') naming the directory and the holder. */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  const key = path.resolve(dataDir);
  const registry = openHere();
  if (registry.has(key)) throw openInThisProcess(dataDir);
  registry.add(key);
  try {
    const file = await take(dataDir);
    let released: Promise<void> | undefined;
    return {
      file,
      release: () => {
        released ??= handBack(dataDir, file).finally(() => registry.delete(key));
        return released;
      },
    };
  } catch (error) {
    registry.delete(key);
    throw MemfoldError.isInstance(error) ? error : cannotLock(dataDir, error);
  }
}

/** Link the next generation naming this process; the generation file on success. */
async function take(dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  await removeDeadDrafts(dataDir);
  const draft = await writeDraft(dataDir, [String(process.pid), processStart(process.pid) ?? '-', bootId() ?? '-'].join(' '));
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const current = await readDataDirLock(dataDir);
      if (current?.holder !== undefined && holdsIt(current.holder)) throw busy(dataDir, current);
      const generation = (current?.generation ?? 0) + 1;
      const file = generationFile(dataDir, generation);
      // Another process linked this generation first: read again (it is live, or it took a stale lock just now).
      if (!(await linkNew(draft, file))) continue;
      // A process that read an older state may have linked a generation removed since: a higher one wins.
      if ((await highestGeneration(dataDir))?.generation !== generation) {
        await rm(file, { force: true });
        continue;
      }
      await removeBelow(dataDir, generation);
      return file;
    }
    const current = await readDataDirLock(dataDir);
    throw busy(dataDir, current);
  } finally {
    await rm(draft, { force: true });
  }
}

/** Write `free` as the generation after ours, then drop the older ones. */
async function handBack(dataDir: string, file: string): Promise<void> {
  const generation = generationOf(path.basename(file));
  if (generation === undefined) return;
  let draft: string | undefined;
  try {
    draft = await writeDraft(dataDir, FREE);
    // Taken already: only a process that judged us gone would have; the directory is its now.
    if (await linkNew(draft, generationFile(dataDir, generation + 1))) await removeBelow(dataDir, generation + 1);
  } catch (error) {
    // The directory is gone (deleted while open): nothing is left to hand back.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  } finally {
    if (draft !== undefined) await rm(draft, { force: true });
  }
}

/**
 * Whether the process a lock file names still holds it: alive, in this boot, and started when the file says (a pid
 * can be reused). This pid counts as a holder only with this process's own start time (another copy of memfold in
 * this process, e.g. in a worker thread); with another start time the file is an earlier process's.
 */
function holdsIt(holder: LockHolder): boolean {
  const boot = bootId();
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return false;
  const started = processStart(holder.pid);
  if (holder.pid === process.pid) return holder.started !== undefined && holder.started === started;
  if (!isAlive(holder.pid)) return false;
  return holder.started === undefined || started === undefined || holder.started === started;
}

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

function generationOf(name: string): number | undefined {
  const match = GENERATION.exec(name);
  return match === null ? undefined : Number(match[1] ?? 0);
}

function generationFile(dataDir: string, generation: number): string {
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

async function highestGeneration(dataDir: string): Promise<{ file: string; generation: number } | undefined> {
  let highest: { file: string; generation: number } | undefined;
  for (const entry of await generations(dataDir)) if (highest === undefined || entry.generation > highest.generation) highest = entry;
  return highest;
}

/** Older generations go only once a higher one exists, so the highest is never removed. */
async function removeBelow(dataDir: string, generation: number): Promise<void> {
  for (const entry of await generations(dataDir)) if (entry.generation < generation) await rm(entry.file, { force: true });
}

/**
 * Write the content to a private file first: a lock appears by `link()`, whole, so no reader sees it half-written. The
 * draft's name carries this pid, so a draft a killed process left is known as such and removed (`removeDeadDrafts`).
 */
async function writeDraft(dataDir: string, content: string): Promise<string> {
  const draft = path.join(dataDir, `${LOCK_FILE_NAME}.draft-${process.pid}-${randomUUID()}`);
  try {
    await writeFile(draft, `${content}\n`);
  } catch (error) {
    await rm(draft, { force: true });
    throw error;
  }
  return draft;
}

const DRAFT = /^memfold\.lock\.draft-(\d+)-/;

/** Drafts of processes that are gone (killed between writing and removing one): nothing else ever removes them. */
async function removeDeadDrafts(dataDir: string): Promise<void> {
  for (const name of await readdir(dataDir)) {
    const pid = Number(DRAFT.exec(name)?.[1]);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !isAlive(pid)) await rm(path.join(dataDir, name), { force: true });
  }
}

/** Link `draft` to `file` unless `file` exists (atomic): whether this call created it. */
async function linkNew(draft: string, file: string): Promise<boolean> {
  try {
    await link(draft, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function openInThisProcess(dataDir: string): MemfoldError {
  return new MemfoldError(
    'busy',
    `PGlite data directory ${dataDir} is already open in this process (pid ${process.pid}): one open per directory. ` +
      'Use the store already open, or close it before opening the directory again.',
    { retryable: true, details: { dataDir, pid: process.pid } },
  );
}

/** The file system refused the lock's files (a read-only folder, a file in the way): say so of the directory itself. */
function cannotLock(dataDir: string, error: unknown): MemfoldError {
  const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  const unwritable = reason === 'EACCES' || reason === 'EPERM' || reason === 'EROFS';
  return new MemfoldError(
    'persistence_error',
    // The code, not the system's message: that names a temporary file of the lock, not the folder to fix.
    `Cannot open PGlite data directory ${dataDir}: ${unwritable ? 'this process cannot write to it' : 'its lock file cannot be written'} (${reason}). ` +
      'memfold keeps its lock and its database there: give this process write access to the folder, or choose another one (home, MEMFOLD_HOME).',
    { cause: error, details: { dataDir, reason } },
  );
}

function busy(dataDir: string, current: LockState | undefined): MemfoldError {
  const pid = current?.holder?.pid;
  if (pid === process.pid) return openInThisProcess(dataDir);
  const who = pid === undefined ? 'another process' : `process ${pid}`;
  const file = current?.file ?? generationFile(dataDir, 1);
  return new MemfoldError(
    'busy',
    `PGlite data directory ${dataDir} is in use by ${who}: one process owns a PGlite directory. ` +
      // What works beside the owner: LanceDB takes readers beside its writer, and these open the archive alone.
      'Beside it, `memfold search`, `inspect` and `export` read the archive alone, and `memfold mcp --read-only` serves memory_read from it. ' +
      `Otherwise close the other store, use PostgreSQL (DATABASE_URL) to share one, or delete ${file} if that process is not memfold.`,
    { retryable: true, details: { dataDir, lockFile: file, pid } },
  );
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
