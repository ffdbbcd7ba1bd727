/** `memfold search <query> --conversation ID`: one memory_read call, as an agent would make it. */
import type { MemoryReadTool } from '../../tools/memory-read.js';
import type { ParsedCommand } from '../args.js';
import { printJson, printStored, type Output } from '../output.js';

/** Runs memory_read of `--conversation` with the query and flags given; exit 1 when the tool refuses (`ok: false`). */
export async function runSearch(
  memoryRead: (conversationId: string) => Pick<MemoryReadTool, 'execute'>,
  parsed: ParsedCommand,
  output: Output,
): Promise<number> {
  const { positionals, flags } = parsed;
  const args: Record<string, unknown> = { query: positionals.query };
  for (const key of ['depth', 'kind', 'from', 'to', 'limit']) if (flags[key] !== undefined) args[key] = flags[key];
  const result = await memoryRead(flags.conversation as string).execute(args);
  if (flags.json === true) printJson(output, result);
  else printStored(output, result.output, result.ok ? 'out' : 'err');
  return result.ok ? 0 : 1;
}
