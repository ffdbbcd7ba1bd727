/**
 * Entry point of the `memfold` bin: run the command, then end the process with its code.
 * Exiting explicitly matters: a native handle (PGlite's WebAssembly runtime, LanceDB's threads) left
 * open after an error would otherwise keep the process, and the store's lock file, alive.
 */
import { errorMessage } from '../errors.js';
import { main } from './main.js';
import { watchStdout } from './output.js';

/** Resolves once everything written to `stream` so far has been handed to the operating system. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve();
    else stream.write('', () => resolve());
  });
}

export async function run(argv: readonly string[]): Promise<never> {
  let code: number;
  watchStdout();
  try {
    code = await main(argv);
  } catch (error) {
    // main reports its own failures; this is the last line of defence, so the process still ends.
    process.stderr.write(`memfold: ${errorMessage(error)}\n`);
    code = 1;
  }
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}
