/**
 * A progress bar for long work: redrawn in place on a terminal, a line every 10% otherwise (CI logs).
 */
export interface ProgressBar {
  update(done: number, note?: string): void;
  finish(note?: string): void;
}

export function createProgressBar(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): ProgressBar {
  const width = 30;
  let lastDecile = -1;
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
        stream.write(`${render(done, note)}\n`);
      }
    },
    finish(note) {
      if (stream.isTTY) stream.write(`\r${render(total, note)}\u001b[K\n`);
      else stream.write(`${render(total, note)}\n`);
    },
  };
}
