/** The PGlite directory lock's refusals: what a caller is told when the directory is held or cannot be locked. */
import { MemfoldError } from '../../errors.js';
import { generationFile, type LockState } from './pglite-lock-generations.js';

export function openInThisProcess(dataDir: string): MemfoldError {
  return new MemfoldError(
    'busy',
    `PGlite data directory ${dataDir} is already open in this process (pid ${process.pid}): one open per directory. ` +
      'Use the store already open, or close it before opening the directory again.',
    { retryable: true, details: { dataDir, pid: process.pid } },
  );
}

/** The file system refused the lock's files (a read-only folder, a file in the way): say so of the directory itself. */
export function cannotLock(dataDir: string, error: unknown): MemfoldError {
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

export function busy(dataDir: string, current: LockState | undefined): MemfoldError {
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
