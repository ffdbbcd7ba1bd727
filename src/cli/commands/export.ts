/** `memfold export <conversation> [--out file]`: everything kept of a conversation, as JSON Lines. */
import { open } from 'node:fs/promises';
import type { Memfold } from '../../memfold.js';
import { printStored, type Output } from '../output.js';

/**
 * Writes one record a line to `out` (created or truncated) or to stdout, as they are read. A conversation with nothing
 * stored gives the header line alone, and a note on stderr.
 */
export async function runExport(
  memfold: Pick<Memfold, 'exportConversation'>,
  conversationId: string,
  options: { out?: string },
  output: Output,
): Promise<number> {
  const file = options.out === undefined ? undefined : await open(options.out, 'w');
  let records = 0;
  try {
    for await (const record of memfold.exportConversation(conversationId)) {
      // The reader of stdout has gone (`| head`): the rest would be dropped, so stop reading the stores.
      if (!file && output.closed) return 0;
      const line = JSON.stringify(record);
      if (file) await file.write(`${line}\n`);
      else printStored(output, line);
      records++;
    }
  } finally {
    await file?.close();
  }
  if (records <= 1) output.err(`memfold export: nothing stored for conversation ${JSON.stringify(conversationId)} (the header alone was written)`);
  else if (file) output.err(`memfold export: ${records} records written to ${options.out}`);
  return 0;
}
