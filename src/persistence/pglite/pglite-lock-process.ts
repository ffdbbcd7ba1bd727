/** Whether a process a PGlite lock file names is still its holder: liveness, start time and boot, where the system tells. */
import { readFileSync } from 'node:fs';
import type { LockHolder } from './pglite-lock-generations.js';

/**
 * Whether the process a lock file names still holds it: alive, in this boot, and started when the file says (a pid
 * can be reused). This pid counts as a holder only with this process's own start time (another copy of memfold in
 * this process, e.g. in a worker thread); with another start time the file is an earlier process's.
 */
export function holdsIt(holder: LockHolder): boolean {
  const boot = bootId();
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return false;
  const started = processStart(holder.pid);
  if (holder.pid === process.pid) return holder.started !== undefined && holder.started === started;
  if (!isAlive(holder.pid)) return false;
  return holder.started === undefined || started === undefined || holder.started === started;
}

/** A process's start time in clock ticks since boot (`/proc/<pid>/stat`, field 22), where the system tells. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** This boot's id (Linux), so a lock written before a reboot is never taken for a live one. */
export function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Signal 0 checks existence; EPERM means the process exists but belongs to another user. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
