/**
 * Tier 2 of a compaction, under the conversation's lock: journal -> archive each chosen tool output verbatim (read
 * back) -> one transaction replacing each live row's text by its placeholder. The operation is journaled as a
 * `clear_tool_outputs` (planned -> archived -> committed | rolled_back) with every label before it is written, so
 * reconcile finishes or undoes one a crash interrupted (reconcile.ts). Never throws: a failure undoes the writes.
 */
import type { ArchiveEntry, ConversationMessage } from '../../conversation/types.js';
import type { OperationStatus } from '../../persistence/persistence-provider.js';
import { createArchiveWriter } from '../batches/archive-writer.js';
import { clearedOutputs, toolOutputEntries, type ClearingSelection } from './clear-tool-outputs.js';
import type { CompactionDeps, ConversationCounts } from '../compaction-deps.js';
import type { CompactionFailureCode, CompactionResult } from '../compaction-result.js';
import { atStage, clientAttemptsOf, StageError, throwIfAborted } from '../stage-error.js';
import { undoOperation } from '../journal/undo-operation.js';

export type ClearingOutcome =
  | {
      ok: true;
      operationId: string;
      history: ConversationMessage[];
      cleared: number;
      tokensFreed: number;
      /** The `tool_output` entries written and read back, by label: tier 3 takes the originals from them. */
      entries: ReadonlyMap<string, ArchiveEntry>;
    }
  | { ok: false; operationId: string; failureCode: CompactionFailureCode; error: string; clientAttempts?: number };

/**
 * Clear `selection` (tool outputs of the live `history`, which the caller loaded under the lock). The outcome's
 * history is `history` with the cleared rows as now stored. Stage time goes to `result.stageMs.clear`. A placeholder
 * names its output's tokens as memfold counts them (uncalibrated, as reconcile does); freed tokens are counted as
 * compaction decides (calibrated).
 */
export async function runClearing(
  selection: ClearingSelection,
  history: readonly ConversationMessage[],
  conversationId: string,
  deps: CompactionDeps,
  result: CompactionResult,
  counts: ConversationCounts,
  signal?: AbortSignal,
): Promise<ClearingOutcome> {
  const { persistence, archive, emit, clock } = deps;
  const operationId = deps.newId();
  const messages = selection.outputs.map((o) => o.message);
  const messageIds = messages.map((m) => m.id);
  let status: OperationStatus = 'planned';
  const journal = (labels: string[]) => persistence.updateOperation({ id: operationId, conversationId, status, labels });
  const writer = createArchiveWriter(archive, conversationId, operationId, journal);
  const started = clock();
  let committing = false;
  try {
    await atStage('unexpected', () =>
      persistence.recordOperation({ id: operationId, conversationId, kind: 'clear_tool_outputs', status: 'planned', messageIds, labels: [] }),
    );
    // As for the other stages: the operation is journaled `planned` when its stage starts.
    emit({ type: 'stage', conversationId, stage: 'clear' });
    // Labels are chosen so that no write lands on a label another operation holds.
    let entries = toolOutputEntries(messages, { conversationId, operationId });
    const taken = new Set(
      (
        await atStage('archive_failed', () =>
          archive.read(
            conversationId,
            entries.map((e) => e.label),
          ),
        )
      ).map((e) => e.label),
    );
    if (taken.size > 0) entries = toolOutputEntries(messages, { conversationId, operationId }, taken);
    await atStage('archive_failed', () => writer.writeVerified(entries));
    status = 'archived';
    await atStage('archive_failed', () => journal([...writer.written]));
    throwIfAborted(signal);

    const tokensOf = new Map(selection.outputs.map((o) => [o.message.id, counts.message(o.message)]));
    const cleared = clearedOutputs(entries, (id) => tokensOf.get(id)!);
    committing = true;
    const updated = await atStage('commit_failed', () => persistence.commitClearing({ conversationId, operationId, cleared, labels: [...writer.written] }));
    return succeeded(updated, entries);
  } catch (error) {
    const stageError = StageError.isInstance(error) ? error : new StageError('unexpected', error);
    // A commit that failed on the way back may still have committed: the journal says so.
    if (committing) {
      const outcome = await persistence.listOperations(conversationId).then(
        (operations) => operations.find((op) => op.id === operationId)?.status,
        () => undefined,
      );
      if (outcome === 'committed') {
        const rows = await persistence.loadHistory(conversationId).catch(() => undefined);
        if (rows)
          return succeeded(
            rows.filter((m) => messageIds.includes(m.id)),
            [],
          );
      }
      // Unknown: left `archived` for reconcile, which finishes it if the rows are unchanged, or undoes it.
      if (outcome === undefined)
        return { ok: false, operationId, failureCode: stageError.failureCode, error: stageError.message, ...clientAttemptsOf(stageError) };
    }
    await undoOperation(writer, { operationId, conversationId, messageIds }, persistence, stageError.message);
    return { ok: false, operationId, failureCode: stageError.failureCode, error: stageError.message, ...clientAttemptsOf(stageError) };
  } finally {
    result.stageMs.clear = (result.stageMs.clear ?? 0) + clock() - started;
  }

  function succeeded(updated: readonly ConversationMessage[], written: readonly ArchiveEntry[]): ClearingOutcome {
    const byId = new Map(updated.map((m) => [m.id, m]));
    const after = history.map((m) => byId.get(m.id) ?? m);
    const tokensFreed = history.reduce((sum, m) => sum + counts.context(m), 0) - after.reduce((sum, m) => sum + counts.context(m), 0);
    emit({ type: 'tool_outputs_cleared', conversationId, operationId, cleared: updated.length, tokensFreed, labels: [...writer.written] });
    return { ok: true, operationId, history: after, cleared: updated.length, tokensFreed, entries: new Map(written.map((e) => [e.label, e])) };
  }
}
