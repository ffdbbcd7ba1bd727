/**
 * One journaled operation of a compaction run: its id, the rows it takes, its archive writer and its journal, where
 * every label is on the operation row before it is written (see journal/reconcile.ts). Also the timing of a stage.
 */
import type { OperationStatus } from '../persistence/persistence-provider.js';
import { createArchiveWriter, type ArchiveWriter } from './batches/archive-writer.js';
import type { StepContext } from './compaction-deps.js';
import type { CompactionStage } from './compaction-result.js';

export interface CompactionOperation {
  id: string;
  messageIds: string[];
  writer: ArchiveWriter;
  /** Journal the operation `archived`, with every label written. */
  archived(): Promise<void>;
}

export function openOperation(input: { conversationId: string; deps: StepContext['deps']; messageIds: string[] }): CompactionOperation {
  const { conversationId, deps, messageIds } = input;
  const id = deps.newId();
  let status: OperationStatus = 'planned';
  const journal = (labels: string[]) => deps.persistence.updateOperation({ id, conversationId, status, labels });
  const writer = createArchiveWriter({ archive: deps.archive, conversationId, operationId: id, journal });
  return {
    id,
    messageIds,
    writer,
    archived() {
      // In turn with the writes: an early re-summarization's write may be in flight, and its journal update must not
      // land before this one (which would drop its label, leaving a row no journal names after a crash).
      return writer.inTurn(() => {
        status = 'archived';
        return journal([...writer.written]);
      });
    },
  };
}

/** Run `work` as `stage`: announced by a `stage` event, its time added to `result.stageMs`. */
export async function timed<T>(step: Pick<StepContext, 'conversationId' | 'deps' | 'result'>, stage: CompactionStage, work: () => Promise<T>): Promise<T> {
  step.deps.emit({ type: 'stage', conversationId: step.conversationId, stage });
  const t0 = step.deps.clock();
  try {
    return await work();
  } finally {
    step.result.stageMs[stage] = (step.result.stageMs[stage] ?? 0) + step.deps.clock() - t0;
  }
}
