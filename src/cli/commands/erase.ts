/** `memfold erase <conversation> --yes`: remove a conversation from both stores, after saying what goes. */
import type { EraseResult } from '../../erase-export/erase-conversation.js';
import type { Memfold } from '../../memfold.js';
import { printJson, printStored, type Output } from '../output.js';

/** What an erase would remove, counted from both stores. */
export interface EraseFootprint {
  conversationId: string;
  /** Rows of the live table, overlay rows and the clip-archive included. */
  liveRows: number;
  summaries: number;
  transcripts: number;
  toolOutputs: number;
  /** Rows of the operation journal. */
  operations: number;
}

export async function eraseFootprint(memfold: Memfold, conversationId: string): Promise<EraseFootprint> {
  const count = async (kind: 'summary' | 'transcript' | 'tool_output') => (await memfold.archive.list({ conversationId, kind })).length;
  return {
    conversationId,
    liveRows: (await memfold.history(conversationId, { includeCompacted: true })).length,
    summaries: await count('summary'),
    transcripts: await count('transcript'),
    toolOutputs: await count('tool_output'),
    operations: (await memfold.persistence.listOperations(conversationId)).length,
  };
}

/** The footprint in words. Pure. */
export function describeFootprint(f: EraseFootprint): string {
  return `${f.liveRows} live rows, ${f.summaries} summary batches, ${f.transcripts} transcript segments, ${f.toolOutputs} cleared tool outputs and ${f.operations} journal rows, with its id ledger, loop guard record and token calibration`;
}

/** What an erase did, in words. Pure. */
export function describeErase(result: EraseResult): string {
  if (result.status === 'not_found') return `nothing stored for conversation ${result.conversationId}: nothing erased`;
  const { archive, live } = result;
  return `erased conversation ${result.conversationId}: ${archive.entries} archive entries (${archive.rowsRewritten} rows of other conversations rewritten), ${live.messages} live rows, ${live.operations} journal rows${live.messagesKept > 0 ? `; ${live.messagesKept} messages appended since the erase began kept` : ''}, in ${result.durationMs} ms`;
}

/** Without `yes`, refuses (exit 1) saying what would go; with it, erases and says what went. */
export async function runErase(memfold: Memfold, conversationId: string, options: { yes: boolean; json: boolean }, output: Output): Promise<number> {
  if (!options.yes) {
    const footprint = await eraseFootprint(memfold, conversationId);
    if (options.json) printJson(output, { erased: false, wouldErase: footprint });
    printStored(
      output,
      `memfold erase: refusing without --yes. This would permanently remove conversation ${conversationId} from both stores: ${describeFootprint(footprint)}. Run again with --yes to erase it.`,
      'err',
    );
    return 1;
  }
  const result = await memfold.eraseConversation(conversationId);
  if (options.json) printJson(output, result);
  else printStored(output, describeErase(result));
  return 0;
}
