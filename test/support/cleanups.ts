/** Cleanups of one test file, run in reverse after its suites; call `fileCleanups()` at the file's top level. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

export interface FileCleanups {
  /** Run `cleanup` after the file's suites (last added, first run). */
  add(cleanup: () => Promise<unknown>): void;
  /** A new temporary folder, removed after the file's suites. */
  tempDir(prefix: string): Promise<string>;
}

export function fileCleanups(): FileCleanups {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return {
    add: (cleanup) => void cleanups.push(cleanup),
    async tempDir(prefix) {
      const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return dir;
    },
  };
}
