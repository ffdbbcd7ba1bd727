/** Entry point of the `memfold` bin: run and exit with the command's code. */
import { main } from './main.js';

export async function run(argv: readonly string[]): Promise<void> {
  process.exitCode = await main(argv);
}
