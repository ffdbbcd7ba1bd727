/**
 * A freshly initialized PGlite data directory, kept once per machine and PGlite version, so that a new
 * home is unpacked (about 2 s, 370 MiB) instead of initialized (`initdb` in WebAssembly: about 10 s,
 * 750 MiB). The first home ever created on a machine initializes and saves the template; every later one
 * loads it. The template holds no memfold data: migrations run on the copy as on a fresh database.
 *
 * Best effort throughout: an unreadable or unwritable cache only means initializing as before.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';

/** The installed PGlite's version: a template is only valid for the PGlite that made it. */
function pgliteVersion(): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite') return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function templateFile(): string | undefined {
  try {
    const version = pgliteVersion();
    return version ? path.join(os.homedir(), '.cache', 'memfold', `pglite-${version}-datadir.tar.gz`) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `dataDir` holds no database yet (PostgreSQL writes `PG_VERSION` when it initializes one). */
export function isNewDataDir(dataDir: string): boolean {
  return !existsSync(path.join(dataDir, 'PG_VERSION'));
}

/** The saved template, or undefined when there is none (or it cannot be read). */
export async function readPgliteTemplate(): Promise<Blob | undefined> {
  const file = templateFile();
  if (!file) return undefined;
  try {
    return new Blob([await readFile(file)]);
  } catch {
    return undefined;
  }
}

/** Save `pglite`, freshly initialized and not yet written to, as the template. Written whole or not at all. */
export async function savePgliteTemplate(pglite: PGlite): Promise<void> {
  const file = templateFile();
  if (!file) return;
  const draft = `${file}.${randomUUID()}`;
  try {
    const dump = await pglite.dumpDataDir('gzip');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(draft, new Uint8Array(await dump.arrayBuffer()));
    await rename(draft, file);
  } catch {
    await rm(draft, { force: true }).catch(() => undefined);
  }
}
