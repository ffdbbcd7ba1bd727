/**
 * A new PGlite data directory seeded from the shipped template (`pglite-template.ts`) instead of `initdb`. The
 * tarball is unpacked here, straight to disk, rather than through PGlite's `loadDataDir` (which unpacks it inside
 * WebAssembly: measured 3 s more than opening the result); PGlite then opens it as an existing database.
 *
 * Only an empty directory (lock files aside) is seeded. `PG_VERSION`, which PGlite takes for "a database is here",
 * is written last, and a marker file first: a directory holding the marker was being seeded when its process
 * stopped, so what is in it is the seed's and is cleared and seeded again.
 */
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
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
    await unpack(template.tarball, dataDir);
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

/**
 * An uncompressed ustar archive read as it arrives (directories and regular files only, as PGlite's `dumpDataDir`
 * writes): `push` takes the next bytes and returns the entries they complete, so no more than one file is held.
 */
export class TarReader {
  #chunks: Uint8Array[] = [];
  #length = 0;
  /** Bytes needed before the next entry can be read: a header, then the header and its data. */
  #needed = BLOCK;
  #ended = false;

  push(chunk: Uint8Array): Entry[] {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
    if (this.#ended || this.#length < this.#needed) return [];
    const bytes = Buffer.concat(this.#chunks, this.#length);
    const entries: Entry[] = [];
    let at = 0;
    this.#needed = BLOCK;
    while (at + BLOCK <= bytes.length) {
      const header = bytes.subarray(at, at + BLOCK);
      if (header.every((byte) => byte === 0)) {
        this.#ended = true;
        break;
      }
      const size = Number.parseInt(text(header, 124, 136).trim() || '0', 8);
      if (!Number.isSafeInteger(size) || size < 0) throw new Error('bad tar entry size');
      const end = at + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
      if (end > bytes.length) {
        this.#needed = end - at;
        break;
      }
      entries.push(entryOf(header, bytes.subarray(at + BLOCK, at + BLOCK + size)));
      at = end;
    }
    // A copy of the rest: the entries' data are views of `bytes`, which the writes hold until they finish.
    const rest = bytes.subarray(at);
    this.#chunks = rest.length > 0 ? [Buffer.from(rest)] : [];
    this.#length = rest.length;
    return entries;
  }
}

function entryOf(header: Uint8Array, data: Uint8Array): Entry {
  const prefix = text(header, 345, 500);
  const name = (prefix ? `${prefix}/` : '') + text(header, 0, 100);
  const type = String.fromCharCode(header[156]!);
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.length === 0 || parts.includes('..')) throw new Error(`bad tar entry ${JSON.stringify(name)}`);
  if (type !== '0' && type !== '\0' && type !== '5') throw new Error(`unsupported tar entry type ${JSON.stringify(type)} (${name})`);
  return { name: parts.join('/'), directory: type === '5', data };
}

/** Unpack the gzipped archive `tarball` under `dir` as it is read, `PG_VERSION` last. */
async function unpack(tarball: string, dir: string): Promise<void> {
  const reader = new TarReader();
  const folders = new Set<string>();
  let writes: Promise<void>[] = [];
  let version: Entry | undefined;
  const folder = async (name: string) => {
    if (folders.has(name)) return;
    folders.add(name);
    await mkdir(path.join(dir, name), { recursive: true });
  };
  const write = async (entry: Entry) => {
    if (entry.directory) return folder(entry.name);
    if (entry.name === 'PG_VERSION') {
      version = entry;
      return;
    }
    await folder(path.posix.dirname(entry.name));
    writes.push(writeFile(path.join(dir, entry.name), entry.data));
    if (writes.length < WRITES_AT_ONCE) return;
    const batch = writes;
    writes = [];
    await Promise.all(batch);
  };
  try {
    await pipeline(createReadStream(tarball), createGunzip(), async (chunks: AsyncIterable<Buffer>) => {
      for await (const chunk of chunks) for (const entry of reader.push(chunk)) await write(entry);
    });
    await Promise.all(writes);
  } finally {
    // No write is left to reject unobserved when reading failed.
    await Promise.allSettled(writes);
  }
  if (!version) throw new Error('the template has no PG_VERSION');
  await writeFile(path.join(dir, (version as Entry).name), (version as Entry).data);
}
