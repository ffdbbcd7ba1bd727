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
}

export const processOutput: Output = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  get isTTY() {
    return process.stdout.isTTY === true;
  },
  progress: process.stderr,
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
