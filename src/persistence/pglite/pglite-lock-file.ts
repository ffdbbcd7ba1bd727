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
 *
 * Here: taking and handing back the lock. Reading the generations: `pglite-lock-generations.ts`; whether a holder is
 * still alive: `pglite-lock-process.ts`; writing a generation: `pglite-lock-drafts.ts`; the refusals:
 * `pglite-lock-errors.ts`.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { MemfoldError } from '../../errors.js';
import { linkNew, removeDeadDrafts, writeDraft } from './pglite-lock-drafts.js';
import { busy, cannotLock, openInThisProcess } from './pglite-lock-errors.js';
import { ATTEMPTS, FREE, generationFile, generationOf, highestGeneration, readDataDirLock, removeBelow } from './pglite-lock-generations.js';
import { bootId, holdsIt, processStart } from './pglite-lock-process.js';

export { LOCK_FILE_NAME, type LockHolder, type LockState, readDataDirLock } from './pglite-lock-generations.js';

export interface DataDirLock {
  /** The generation file this open wrote. */
  readonly file: string;
  /** Hand the directory back: write the next generation as `free`. Never throws for a directory already gone. */
  release(): Promise<void>;
}

/** Directories open in this process (resolved paths), shared by every copy of this module. */
const REGISTRY_KEY = Symbol.for('memfold.pglite.openDataDirs');
function openHere(): Set<string> {
  const scope = globalThis as { [REGISTRY_KEY]?: Set<string> };
  scope[REGISTRY_KEY] ??= new Set<string>();
  return scope[REGISTRY_KEY];
}

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
