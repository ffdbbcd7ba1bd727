/**
 * Operator re-summarization (`memfold resummarize`): fold every frontier batch of one depth into one
 * batch of depth + 1 and refresh the clip-archive. Journaled like a compaction that covers no messages:
 * a crash leaves it `planned`, and reconcile undoes it.
 */
import type { SummaryBatch } from '../../conversation/types.js';
import { errorMessage, InvalidArgumentError } from '../../errors.js';
import { createArchiveWriter } from '../batches/archive-writer.js';
import { buildClipArchive } from '../view/clip-archive.js';
import { listFrontier } from '../batches/list-frontier.js';
import type { CompactionDeps } from '../compaction-deps.js';
import { reconcileAndReport } from '../journal/reconcile.js';
import { resummarizeContext } from './fold-context.js';
import { replaceRun } from '../plan/frontier.js';
import { foldRun } from './resummarize.js';
import { undoOperation } from '../journal/undo-operation.js';

export interface ResummarizeResult {
  created: SummaryBatch[];
  clipArchive: string;
}

/** The caller holds the conversation's lock. Throws on failure, after undoing its writes. */
export async function resummarizeDepthLocked(conversationId: string, depth: number, deps: CompactionDeps): Promise<ResummarizeResult> {
  const { persistence, settings } = deps;
  await reconcileAndReport(conversationId, deps);
  const current = await listFrontier(deps, conversationId);
  const run = current.filter((b) => b.depth === depth);
  if (run.length < 2) throw new InvalidArgumentError('depth', `needs at least 2 frontier batches of depth ${depth} (found ${run.length})`);
  const operationId = deps.newId();
  await persistence.recordOperation({ id: operationId, conversationId, status: 'planned', messageIds: [], labels: [] });
  const journal = (labels: string[]) => persistence.updateOperation({ id: operationId, conversationId, status: 'planned', labels });
  const writer = createArchiveWriter({ archive: deps.archive, conversationId, operationId, journal });
  try {
    const parent = await foldRun(run, resummarizeContext(deps, { conversationId, operationId }, writer, depth + 1));
    const clipArchive = buildClipArchive(replaceRun(current, run, parent), settings.clipFirst, settings.clipLast);
    await persistence.commitCompaction({ conversationId, operationId, deleteIds: [], clipArchive, labels: [...writer.written] });
    return { created: [parent], clipArchive };
  } catch (error) {
    await undoOperation({ writer, operation: { operationId, conversationId, messageIds: [] }, persistence, cause: errorMessage(error) });
    throw error;
  }
}
