/**
 * The template's archive is read in pieces (`pglite-tar-reader.ts`) and unpacked piece by piece (`pglite-seed.ts`):
 * no file is held whole, and a run of zeros is left as a hole. What lands on disk must still be the archived
 * directory byte for byte: files of every size, runs of zeros inside and at the end, empty files and folders.
 */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { seedDataDir } from '../../src/persistence/pglite/pglite-seed.js';
import { TarReader } from '../../src/persistence/pglite/pglite-tar-reader.js';
import { tarDirectory } from '../../src/persistence/pglite/pglite-template-tar.js';
import {
  installedPgliteVersion,
  migrationDigests,
  TEMPLATE_MANIFEST,
  TEMPLATE_TARBALL,
  type TemplateManifest,
} from '../../src/persistence/pglite/pglite-template.js';
import { fileCleanups } from '../support/cleanups.js';

const cleanups = fileCleanups();

/** Bytes with `nonZero` set to 1..255 at the given offsets, zeros elsewhere. */
function bytes(length: number, nonZero: number[] = []): Buffer {
  const data = Buffer.alloc(length);
  for (const at of nonZero) data[at] = (at % 255) + 1;
  return data;
}

/** A directory shaped like a data directory: a WAL-like file (16 MiB, zeros after its first MiB), and the rest. */
const FILES: Record<string, Buffer> = {
  PG_VERSION: Buffer.from('17\n'),
  'pg_wal/000000010000000000000001': bytes(16 * 1024 * 1024, [0, 5000, 1024 * 1024 - 1]),
  'base/5/1255': bytes(835_584, [0, 300_000, 835_583]),
  'base/5/zero-middle': bytes(2 * 1024 * 1024, [0, 2 * 1024 * 1024 - 1]),
  'base/5/all-zeros': bytes(600_000),
  'base/5/small': Buffer.from('a small file'),
  'global/empty': Buffer.alloc(0),
};
const EMPTY_FOLDERS = ['pg_tblspc', 'pg_twophase'];

async function archivedDirectory(): Promise<{ dir: string; tarball: Uint8Array }> {
  const dir = await cleanups.tempDir('memfold-tar-src-');
  for (const [name, data] of Object.entries(FILES)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), data);
  }
  for (const name of EMPTY_FOLDERS) await mkdir(path.join(dir, name));
  return { dir, tarball: await tarDirectory(dir) };
}

/** A template folder holding `tarball` and a manifest that fits this package. */
async function templateOf(tarball: Uint8Array): Promise<string> {
  const templates = await cleanups.tempDir('memfold-tar-template-');
  const manifest: TemplateManifest = {
    pgliteVersion: installedPgliteVersion(),
    schema: 'memfold',
    migrations: await migrationDigests(),
    systemIdentifier: '1',
  };
  await writeFile(path.join(templates, TEMPLATE_TARBALL), tarball);
  await writeFile(path.join(templates, TEMPLATE_MANIFEST), JSON.stringify(manifest));
  return templates;
}

describe('TarReader', () => {
  it('hands each file on in pieces no larger than what was pushed, which put together are the file', async () => {
    const archive = gunzipSync((await archivedDirectory()).tarball);
    const reader = new TarReader();
    const files = new Map<string, Buffer>();
    const folders: string[] = [];
    const CHUNK = 64 * 1024;
    for (let at = 0; at < archive.length; at += CHUNK) {
      for (const piece of reader.push(archive.subarray(at, at + CHUNK))) {
        expect(piece.data.length).toBeLessThanOrEqual(CHUNK);
        if (piece.entry.directory) folders.push(piece.entry.name);
        else {
          const file = files.get(piece.entry.name) ?? Buffer.alloc(piece.entry.size);
          file.set(piece.data, piece.offset);
          files.set(piece.entry.name, file);
        }
      }
    }
    expect(reader.ended).toBe(true);
    expect([...files.keys()].sort()).toEqual(Object.keys(FILES).sort());
    for (const [name, data] of files) expect(data.equals(FILES[name]!), name).toBe(true);
    expect(folders).toEqual(expect.arrayContaining(EMPTY_FOLDERS));
  });

  it('reads an archive pushed one byte at a time', async () => {
    const archive = gunzipSync((await archivedDirectory()).tarball).subarray(0, 3 * 512 + 64);
    const reader = new TarReader();
    const pieces = [];
    for (let at = 0; at < archive.length; at++) pieces.push(...reader.push(archive.subarray(at, at + 1)));
    expect(pieces.length).toBeGreaterThan(0);
    expect(pieces.every((piece) => piece.data.length <= 1)).toBe(true);
  });
});

describe('seedDataDir unpacking piece by piece', () => {
  it('writes the archived directory byte for byte: runs of zeros, empty files, empty folders', async () => {
    const { tarball } = await archivedDirectory();
    const templates = await templateOf(tarball);
    const dataDir = await cleanups.tempDir('memfold-tar-seeded-');
    expect(await seedDataDir(dataDir, 'memfold', { dir: templates })).toBe(true);
    for (const [name, data] of Object.entries(FILES)) {
      expect((await stat(path.join(dataDir, name))).size, name).toBe(data.length);
      expect((await readFile(path.join(dataDir, name))).equals(data), name).toBe(true);
    }
    for (const name of EMPTY_FOLDERS) expect(await readdir(path.join(dataDir, name))).toEqual([]);
    expect(await readdir(dataDir)).not.toContain('memfold-seeding');
  });

  it('an archive cut short after whole entries (no end blocks) is refused and leaves nothing', async () => {
    const { tarball } = await archivedDirectory();
    const archive = gunzipSync(tarball);
    // PG_VERSION, then the folders base and base/5; the gzip stream itself ends cleanly.
    const templates = await templateOf(gzipSync(archive.subarray(0, 4 * 512)));
    const dataDir = await cleanups.tempDir('memfold-tar-seeded-');
    expect(await seedDataDir(dataDir, 'memfold', { dir: templates })).toBe(false);
    expect(await readdir(dataDir)).toEqual([]);
  });
});
