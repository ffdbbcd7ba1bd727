/**
 * Runs one `memfold` command in this process through the CLI's `main` (parsing, configuration and
 * output included), with the given environment variables set for its duration and restored after.
 * The configuration variables memfold reads are unset unless given, so the runner's DATABASE_URL or
 * LANCEDB_URI never leaks into a test that means to use an embedded home.
 */
import { main } from '../../src/cli/main.js';
import type { Output } from '../../src/cli/output.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** What progress bars drew (stderr for the bin). */
  progress: string;
}

export interface CliOptions {
  /** Variables to set (undefined unsets one). */
  env?: Record<string, string | undefined>;
  /** Whether stdout is a terminal (control characters are then escaped). Default false. */
  tty?: boolean;
  /** Give the command a progress stream (collected in `progress`). Default false. */
  progress?: boolean;
}

const CONFIG_VARIABLES = [
  'MEMFOLD_HOME',
  'MEMFOLD_NAMESPACE',
  'MEMFOLD_DATABASE_URL',
  'DATABASE_URL',
  'MEMFOLD_DATABASE_SCHEMA',
  'LANCEDB_URI',
  'MEMFOLD_OPENAI_BASE_URL',
  'OPENAI_BASE_URL',
  'MEMFOLD_OPENAI_API_KEY',
  'MEMFOLD_SUMMARY_MODEL',
  'MEMFOLD_EMBEDDING_MODEL',
];

export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const vars: Record<string, string | undefined> = { ...Object.fromEntries(CONFIG_VARIABLES.map((key) => [key, undefined])), ...options.env };
  const saved = Object.fromEntries(Object.keys(vars).map((key) => [key, process.env[key]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  const result: CliResult = { code: -1, stdout: '', stderr: '', progress: '' };
  const output: Output = {
    out: (text) => void (result.stdout += `${text}\n`),
    err: (text) => void (result.stderr += `${text}\n`),
    isTTY: options.tty ?? false,
    ...(options.progress ? { progress: { isTTY: false, write: (text: string) => void (result.progress += text) } } : {}),
  };
  set(vars);
  try {
    result.code = await main(args, output);
    return result;
  } finally {
    set(saved);
  }
}
