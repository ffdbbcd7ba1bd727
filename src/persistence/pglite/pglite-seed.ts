/**
 * A new PGlite data directory seeded from the shipped template (`pglite-template.ts`) instead of `initdb`. The
 * tarball is unpacked here, straight to disk, rather than through PGlite's `loadDataDir` (which unpacks it inside
 * WebAssembly: measured 3 s more than opening the result); PGlite then opens it as an existing database.
 *
 * Only an empty directory (lock files aside) is seeded. `PG_VERSION`, which PGlite takes for "a database is here",
 * is written last, and a marker file first: a directory holding the marker was being seeded when its process
 * stopped, so what is in it is the seed's and is cleared and seeded again.
 */
import { gunzip } from 'node:zlib';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { LOCK_FILE_NAME } from './pglite-lock-file.js';
import { usableTemplate, type TemplateSource } from './pglite-template.js';

const SEEDING_MARKER = 'memfold-seeding';
const BLOCK = 512;
/** Files written at once. */
const WRITES_AT_ONCE = 16;

/** What is in `dataDir` besides the lock files. */
async function contents(dataDir: string): Promise<string[]> {
  const names = await readdir(dataDir);
  return names.filter((name) => !name.startsWith(LOCK_FILE_NAME));
}

async function clear(dataDir: string, names: readonly string[]): Promise<void> {
  await Promise.all(names.map((name) => rm(path.join(dataDir, name), { recursive: true, force: true })));
}

/**
 * Seed `dataDir` (created and locked by the caller) from the template when it holds no database and the template
 * fits `schema`. Returns whether it did; false leaves the directory as it was, for PGlite's `initdb`.
 */
export async function seedDataDir(dataDir: string, schema: string, source?: TemplateSource): Promise<boolean> {
  if (existsSync(path.join(dataDir, 'PG_VERSION'))) {
    // Seeded completely; the marker's removal was all that was left.
    await rm(path.join(dataDir, SEEDING_MARKER), { force: true });
    return false;
  }
  const found = await contents(dataDir);
  if (found.includes(SEEDING_MARKER)) await clear(dataDir, found);
  else if (found.length > 0) return false;
  const template = await usableTemplate(schema, source);
  if (!template) return false;
  await writeFile(path.join(dataDir, SEEDING_MARKER), '');
  try {
    await unpack(await promisify(gunzip)(await readFile(template.tarball)), dataDir);
  } catch {
    // A template that cannot be unpacked is none: initdb makes the directory.
    await clear(dataDir, await contents(dataDir));
    return false;
  }
  await rm(path.join(dataDir, SEEDING_MARKER), { force: true });
  return true;
}

interface Entry {
  name: string;
  directory: boolean;
  data: Uint8Array;
}

function text(block: Uint8Array, from: number, to: number): string {
  const field = block.subarray(from, to);
  const end = field.indexOf(0);
  return Buffer.from(end === -1 ? field : field.subarray(0, end)).toString('utf8');
}

/** The entries of an uncompressed ustar archive (directories and regular files only, as PGlite's `dumpDataDir` writes). */
export function* tarEntries(tar: Uint8Array): Generator<Entry> {
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((byte) => byte === 0)) return;
    const prefix = text(header, 345, 500);
    const name = (prefix ? `${prefix}/` : '') + text(header, 0, 100);
    const size = Number.parseInt(text(header, 124, 136).trim() || '0', 8);
    const type = String.fromCharCode(header[156]!);
    const parts = name.split('/').filter((part) => part !== '' && part !== '.');
    if (!Number.isSafeInteger(size) || parts.length === 0 || parts.includes('..')) throw new Error(`bad tar entry ${JSON.stringify(name)}`);
    if (type !== '0' && type !== '\0' && type !== '5') throw new Error(`unsupported tar entry type ${JSON.stringify(type)} (${name})`);
    at += BLOCK;
    yield { name: parts.join('/'), directory: type === '5', data: tar.subarray(at, at + size) };
    at += Math.ceil(size / BLOCK) * BLOCK;
  }
}

/** Write the archive's entries under `dir`, `PG_VERSION` last. */
async function unpack(tar: Uint8Array, dir: string): Promise<void> {
  const files: Entry[] = [];
  const folders = new Set<string>();
  let version: Entry | undefined;
  for (const entry of tarEntries(tar)) {
    if (entry.directory) folders.add(entry.name);
    else if (entry.name === 'PG_VERSION') version = entry;
    else {
      files.push(entry);
      folders.add(path.posix.dirname(entry.name));
    }
  }
  if (!version) throw new Error('the template has no PG_VERSION');
  for (const folder of folders) await mkdir(path.join(dir, folder), { recursive: true });
  for (let i = 0; i < files.length; i += WRITES_AT_ONCE) {
    await Promise.all(files.slice(i, i + WRITES_AT_ONCE).map((file) => writeFile(path.join(dir, file.name), file.data)));
  }
  await writeFile(path.join(dir, version.name), version.data);
}
