/**
 * A new PGlite data directory seeded from the shipped template (`pglite-template.ts`) instead of `initdb`. The
 * tarball is unpacked here, straight to disk, rather than through PGlite's `loadDataDir` (which unpacks it inside
 * WebAssembly: measured 3 s more than opening the result); PGlite then opens it as an existing database.
 *
 * Only an empty directory (lock files aside) is seeded. `PG_VERSION`, which PGlite takes for "a database is here",
 * is written last, and a marker file first: a directory holding the marker was being seeded when its process
 * stopped, so what is in it is the seed's and is cleared and seeded again.
 */
import { closeSync, createReadStream, existsSync, ftruncateSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { LOCK_FILE_NAME } from './pglite-lock-file.js';
import { TarReader, type TarPiece } from './pglite-tar-reader.js';
import { usableTemplate, type TemplateSource } from './pglite-template.js';

const SEEDING_MARKER = 'memfold-seeding';
/** Bytes read and inflated at a time. */
const CHUNK = 256 * 1024;
const ZEROS = new Uint8Array(CHUNK);

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

/** Writes the pieces of a `TarReader` under `dir`: folders made once, one file open at a time. */
class Unpacker {
  #folders = new Set<string>();
  #fd: number | undefined;
  /** `PG_VERSION`'s bytes, written last. */
  version: Uint8Array | undefined;

  constructor(readonly dir: string) {}

  #folder(name: string): void {
    if (this.#folders.has(name)) return;
    this.#folders.add(name);
    mkdirSync(path.join(this.dir, name), { recursive: true });
  }

  write({ entry, offset, data, last }: TarPiece): void {
    if (entry.directory) {
      this.#folder(entry.name);
      return;
    }
    if (entry.name === 'PG_VERSION') {
      this.version = Buffer.concat([this.version ?? new Uint8Array(0), data]);
      return;
    }
    const file = path.join(this.dir, entry.name);
    if (offset === 0 && last) {
      this.#folder(path.posix.dirname(entry.name));
      writeFileSync(file, data);
      return;
    }
    if (offset === 0) {
      this.#folder(path.posix.dirname(entry.name));
      this.#fd = openSync(file, 'w');
    }
    // A piece of zeros is left as a hole, which reads back as zeros: half the WAL segment is.
    if (!isZeros(data)) writeSync(this.#fd!, data, 0, data.length, offset);
    if (!last) return;
    ftruncateSync(this.#fd!, entry.size);
    this.close();
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

function isZeros(data: Uint8Array): boolean {
  return data.length <= ZEROS.length && Buffer.compare(data, ZEROS.subarray(0, data.length)) === 0;
}

/**
 * Unpack the gzipped archive `tarball` under `dir` as it is read, `PG_VERSION` last. Read and inflated in chunks of
 * `CHUNK` (the streams' 16 KiB default cost three times the CPU: measured 400-670 ms user against 150-240 for the
 * template's 40 MB) and written as each chunk comes, synchronously (a chunk holds little; asynchronous writes, 16
 * files at a time, cost twice the CPU).
 */
async function unpack(tarball: string, dir: string): Promise<void> {
  const reader = new TarReader();
  const unpacker = new Unpacker(dir);
  try {
    await pipeline(createReadStream(tarball, { highWaterMark: CHUNK }), createGunzip({ chunkSize: CHUNK }), async (chunks: AsyncIterable<Buffer>) => {
      for await (const chunk of chunks) for (const piece of reader.push(chunk)) unpacker.write(piece);
    });
  } finally {
    unpacker.close();
  }
  if (!reader.ended || !unpacker.version) throw new Error('the template is cut short or has no PG_VERSION');
  writeFileSync(path.join(dir, 'PG_VERSION'), unpacker.version);
}
