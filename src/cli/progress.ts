/**
 * A progress bar for long work: redrawn in place on a terminal, a line every 10% otherwise (CI logs).
 */
export interface ProgressBar {
  update(done: number, note?: string): void;
  /** The last line, at `done` (default: all of `total`). */
  finish(note?: string, done?: number): void;
}

/** What a bar draws on: the few members of a stream it uses (process.stderr is one). */
export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export function createProgressBar(label: string, total: number, stream: ProgressStream = process.stderr): ProgressBar {
  const width = 30;
  let lastDecile = -1;
  let lastLine = '';
  const render = (done: number, note = '') => {
    const share = total === 0 ? 1 : Math.min(1, done / total);
    const filled = Math.round(share * width);
    return `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${note}`.trimEnd();
  };
  return {
    update(done, note) {
      if (stream.isTTY) {
        stream.write(`\r${render(done, note)}\u001b[K`);
        return;
      }
      const decile = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (decile !== lastDecile) {
        lastDecile = decile;
        lastLine = render(done, note);
        stream.write(`${lastLine}\n`);
      }
    },
    finish(note, done = total) {
      if (stream.isTTY) stream.write(`\r${render(done, note)}\u001b[K\n`);
      // Not a terminal: the last update may already have printed this very line.
      else if (render(done, note) !== lastLine) stream.write(`${render(done, note)}\n`);
    },
  };
}
