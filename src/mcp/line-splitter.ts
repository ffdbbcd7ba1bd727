/**
 * Newline-delimited input, split into lines of at most `maxLineBytes`: a line over the limit is reported at once
 * (not at its newline, so a client need not send the rest to learn why nothing else comes) and its bytes are dropped
 * up to its newline.
 */
export interface LineSplitterInput {
  maxLineBytes: number;
  onLine: (bytes: Buffer) => void;
  onTooLong: () => void;
}

export interface LineSplitter {
  push(chunk: Buffer | string): void;
  /** Drop a partial line. */
  reset(): void;
}

export function createLineSplitter({ maxLineBytes, onLine, onTooLong }: LineSplitterInput): LineSplitter {
  let pieces: Buffer[] = [];
  let pieceBytes = 0;
  /** Inside a line that passed the limit: its bytes are dropped up to its newline. */
  let skipping = false;
  const reset = () => {
    pieces = [];
    pieceBytes = 0;
  };
  return {
    push(chunk) {
      const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      let start = 0;
      while (start <= data.length) {
        const newline = data.indexOf(0x0a, start);
        const end = newline === -1 ? data.length : newline;
        if (!skipping && pieceBytes + (end - start) > maxLineBytes) {
          skipping = true;
          reset();
          onTooLong();
        }
        if (!skipping && end > start) {
          pieces.push(data.subarray(start, end));
          pieceBytes += end - start;
        }
        if (newline === -1) break;
        if (!skipping) onLine(pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces));
        reset();
        skipping = false;
        start = newline + 1;
      }
    },
    reset,
  };
}
