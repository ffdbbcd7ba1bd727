/**
 * The lines of a byte stream, each at most `maxLineBytes` long. readline holds a line of any length in memory,
 * so a file without line breaks (`/dev/zero`, a binary dump) grew until V8 threw a RangeError from inside the
 * stream, past any try/catch; here such a line is refused as soon as it passes the limit, naming its number.
 * Line breaks are readline's: `\n`, `\r\n` or a lone `\r`. Text is decoded as UTF-8 per line (both break bytes
 * are ASCII, so no character is ever split).
 */
const LF = 0x0a;
const CR = 0x0d;

export interface BoundedLinesOptions {
  /** Bytes a line may take, without its break. */
  maxLineBytes: number;
  /** The error for line `lineNumber` (1-based), longer than the limit. */
  tooLong: (lineNumber: number) => Error;
}

export async function* boundedLines(chunks: AsyncIterable<Buffer | string>, options: BoundedLinesOptions): AsyncGenerator<string> {
  let pieces: Buffer[] = [];
  let pieceBytes = 0;
  let lineNumber = 1;
  /** The previous chunk ended in `\r`: a `\n` opening this one belongs to that break. */
  let afterCr = false;
  const take = (): string => {
    const text = (pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)).toString('utf8');
    pieces = [];
    pieceBytes = 0;
    lineNumber++;
    return text;
  };
  for await (const chunk of chunks) {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = afterCr && data[0] === LF ? 1 : 0;
    afterCr = false;
    for (let i = start; i < data.length; i++) {
      const byte = data[i];
      if (byte !== LF && byte !== CR) continue;
      pieceBytes += i - start;
      if (pieceBytes > options.maxLineBytes) throw options.tooLong(lineNumber);
      pieces.push(data.subarray(start, i));
      yield take();
      if (byte === CR) {
        if (i + 1 < data.length) {
          if (data[i + 1] === LF) i++;
        } else afterCr = true;
      }
      start = i + 1;
    }
    if (start < data.length) {
      pieceBytes += data.length - start;
      if (pieceBytes > options.maxLineBytes) throw options.tooLong(lineNumber);
      pieces.push(data.subarray(start));
    }
  }
  if (pieceBytes > 0) yield take();
}
