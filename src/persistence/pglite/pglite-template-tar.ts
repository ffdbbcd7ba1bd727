/**
 * A closed PGlite data directory as the gzipped ustar archive `pglite-seed.ts` unpacks: directories and regular files,
 * in name order, lock files left out. Written here rather than by PGlite's `dumpDataDir`, which archives a running
 * database: a directory seeded from that one starts with crash recovery. This one was shut down cleanly.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { LOCK_FILE_NAME } from './pglite-lock-file.js';

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** A ustar header; names over 100 bytes are split at a slash into prefix and name. */
function header(name: string, size: number, directory: boolean): Uint8Array {
  const block = Buffer.alloc(BLOCK);
  const split = Buffer.byteLength(name) > 100 ? name.lastIndexOf('/', 155) : -1;
  if (Buffer.byteLength(name) > 100 && (split <= 0 || Buffer.byteLength(name.slice(split + 1)) > 100)) throw new Error(`name too long for ustar: ${name}`);
  block.write(split > 0 ? name.slice(split + 1) : name, 0, 100, 'utf8');
  block.write(octal(directory ? 0o755 : 0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(0, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(directory ? '5' : '0', 156, 'ascii');
  block.write('ustar\u000000', 257, 'ascii');
  if (split > 0) block.write(name.slice(0, split), 345, 155, 'utf8');
  const sum = block.reduce((total, byte) => total + byte, 0);
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** The paths under `dir`, relative and with `/`, in name order, lock files left out. */
async function walk(dir: string, under = ''): Promise<Array<{ name: string; directory: boolean }>> {
  const found: Array<{ name: string; directory: boolean }> = [];
  const entries = (await readdir(path.join(dir, under), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const name = under ? `${under}/${entry.name}` : entry.name;
    if (!under && entry.name.startsWith(LOCK_FILE_NAME)) continue;
    if (entry.isDirectory()) found.push({ name, directory: true }, ...(await walk(dir, name)));
    else if (entry.isFile()) found.push({ name, directory: false });
    else throw new Error(`not a file or directory: ${name}`);
  }
  return found;
}

/** `dir` (closed) as a gzipped ustar archive. */
export async function tarDirectory(dir: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for (const entry of await walk(dir)) {
    if (entry.directory) {
      parts.push(header(entry.name, 0, true));
      continue;
    }
    const data = await readFile(path.join(dir, entry.name));
    parts.push(header(entry.name, data.length, false), data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return gzipSync(Buffer.concat(parts), { level: 9 });
}
