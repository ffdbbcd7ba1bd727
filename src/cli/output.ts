/** Printing helpers shared by the commands: JSON for `--json`, readable text otherwise. */
import type { ProgressStream } from './progress.js';
import { escapeControlCharacters } from './terminal-text.js';

export interface Output {
  out(text: string): void;
  err(text: string): void;
  /** Whether `out` writes to a terminal: stored text is then shown with its control characters escaped. Default false. */
  readonly isTTY?: boolean;
  /** Where progress bars draw (stderr for the bin); none are drawn without it. */
  readonly progress?: ProgressStream;
  /**
   * Whether the reader of `out` has gone (`memfold export c | head`): what `out` writes is then dropped, and a
   * command printing a long output stops early. Default false.
   */
  readonly closed?: boolean;
}

let stdoutClosed = false;

/**
 * A reader that closes the pipe early is not an error: stdout's EPIPE marks the output closed (nothing more is
 * written, no stack trace) and the command ends with its own exit code. Any other error of stdout is reported once
 * on stderr and closes it too. Called by the bin, never by the library.
 */
export function watchStdout(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (!stdoutClosed && error.code !== 'EPIPE') process.stderr.write(`memfold: stdout: ${error.message}\n`);
    stdoutClosed = true;
  });
}

export const processOutput: Output = {
  out: (text) => {
    if (!stdoutClosed) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  },
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  get isTTY() {
    return process.stdout.isTTY === true;
  },
  progress: process.stderr,
  get closed() {
    return stdoutClosed;
  },
};

export function printJson(output: Output, value: unknown): void {
  output.out(JSON.stringify(value, null, 2));
}

/**
 * Print text that holds stored content (messages, summaries, labels). On a terminal its control
 * characters are escaped; into a pipe or file it goes unchanged, as `--json` always does.
 */
export function printStored(output: Output, text: string, stream: 'out' | 'err' = 'out'): void {
  output[stream](output.isTTY === true ? escapeControlCharacters(text) : text);
}

export { formatContext, formatMessage } from '../conversation/context-text.js';
