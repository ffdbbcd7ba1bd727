/**
 * An uncompressed ustar archive read as it arrives (directories and regular files only, as `pglite-template-tar.ts`
 * writes it), handed on in pieces: no file is held whole, so unpacking the template's 16 MiB WAL segment costs no
 * more memory than any other file (holding it whole, with the chunks it came in, was 40-60 MiB more peak RSS for the
 * first open, which PGlite's own ~180 MiB then came on top of).
 */

const BLOCK = 512;

/** A header's entry. */
export interface TarEntry {
  /** Relative, with `/`, never leaving the archive's folder. */
  name: string;
  directory: boolean;
  /** The file's length in bytes; 0 for a directory. */
  size: number;
}

/**
 * The next bytes of an entry: `data` (a view of the chunk pushed, valid until the next push) goes at `offset` of the
 * file; `last` is set on its final piece. An empty file or a directory comes as one piece with no data.
 */
export interface TarPiece {
  entry: TarEntry;
  offset: number;
  data: Uint8Array;
  last: boolean;
}

function text(block: Uint8Array, from: number, to: number): string {
  const field = block.subarray(from, to);
  const end = field.indexOf(0);
  return Buffer.from(end === -1 ? field : field.subarray(0, end)).toString('utf8');
}

function entryOf(header: Uint8Array): TarEntry {
  const prefix = text(header, 345, 500);
  const name = (prefix ? `${prefix}/` : '') + text(header, 0, 100);
  const type = String.fromCharCode(header[156]!);
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.length === 0 || parts.includes('..')) throw new Error(`bad tar entry ${JSON.stringify(name)}`);
  if (type !== '0' && type !== '\0' && type !== '5') throw new Error(`unsupported tar entry type ${JSON.stringify(type)} (${name})`);
  const size = Number.parseInt(text(header, 124, 136).trim() || '0', 8);
  if (!Number.isSafeInteger(size) || size < 0) throw new Error('bad tar entry size');
  const directory = type === '5';
  return { name: parts.join('/'), directory, size: directory ? 0 : size };
}

export class TarReader {
  /** The part of a header received so far. */
  #header = new Uint8Array(BLOCK);
  #headerLength = 0;
  /** The entry whose data is being read, and how much of it has come. */
  #entry: TarEntry | undefined;
  #offset = 0;
  /** Padding bytes still to skip after the entry's data. */
  #skip = 0;
  #ended = false;

  /** Whether the archive's end (a zero block) has been read. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The pieces `chunk` completes, in order. */
  push(chunk: Uint8Array): TarPiece[] {
    const pieces: TarPiece[] = [];
    let at = 0;
    while (at < chunk.length && !this.#ended) {
      if (this.#skip > 0) {
        const skipped = Math.min(this.#skip, chunk.length - at);
        this.#skip -= skipped;
        at += skipped;
      } else if (this.#entry) at = this.#readData(chunk, at, pieces);
      else at = this.#readHeader(chunk, at, pieces);
    }
    return pieces;
  }

  #readHeader(chunk: Uint8Array, at: number, pieces: TarPiece[]): number {
    const taken = Math.min(BLOCK - this.#headerLength, chunk.length - at);
    this.#header.set(chunk.subarray(at, at + taken), this.#headerLength);
    this.#headerLength += taken;
    if (this.#headerLength < BLOCK) return at + taken;
    this.#headerLength = 0;
    if (this.#header.every((byte) => byte === 0)) {
      this.#ended = true;
      return chunk.length;
    }
    const entry = entryOf(this.#header);
    if (entry.size === 0) pieces.push({ entry, offset: 0, data: new Uint8Array(0), last: true });
    else {
      this.#entry = entry;
      this.#offset = 0;
    }
    return at + taken;
  }

  #readData(chunk: Uint8Array, at: number, pieces: TarPiece[]): number {
    const entry = this.#entry!;
    const taken = Math.min(entry.size - this.#offset, chunk.length - at);
    const last = this.#offset + taken === entry.size;
    pieces.push({ entry, offset: this.#offset, data: chunk.subarray(at, at + taken), last });
    this.#offset += taken;
    if (last) {
      this.#entry = undefined;
      this.#skip = (BLOCK - (entry.size % BLOCK)) % BLOCK;
    }
    return at + taken;
  }
}
