/**
 * Tier 2 of a compaction, under the conversation's lock: journal -> archive each chosen tool output verbatim (read
 * back) -> one transaction replacing each live row's text by its placeholder. The operation is journaled as a
 * `clear_tool_outputs` (planned -> archived -> committed | rolled_back) with every label before it is written, so
 * reconcile finishes or undoes one a crash interrupted (reconcile.ts). Never throws: a failure undoes the writes.
 */
import type { ArchiveEntry, ConversationMessage, ToolOutputEntry } from '../../conversation/types.js';
import { clearedOutputs, toolOutputEntries, type ClearingSelection } from './clear-tool-outputs.js';
import type { StepContext } from '../compaction-deps.js';
import { openOperation, type CompactionOperation } from '../compaction-operation.js';
import type { CompactionFailureCode } from '../compaction-result.js';
import { atStage, clientAttemptsOf, StageError, throwIfAborted } from '../stage-error.js';
import { undoOperation } from '../journal/undo-operation.js';
import { writeOptionsAfterLookup } from '../batches/archive-writer.js';

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

export interface RunClearingInput extends StepContext {
  selection: ClearingSelection;
  /** The live history the caller loaded under the lock. */
  history: readonly ConversationMessage[];
}

/**
 * Clear `selection` (tool outputs of the live `history`). The outcome's history is `history` with the cleared rows as
 * now stored. Stage time goes to `result.stageMs.clear`. A placeholder names its output's tokens as memfold counts them
 * (uncalibrated, as reconcile does); freed tokens are counted as compaction decides (calibrated).
 */
export async function runClearing(input: RunClearingInput): Promise<ClearingOutcome> {
  const { conversationId, deps, result } = input;
  const messageIds = input.selection.outputs.map((o) => o.message.id);
  const operation = openOperation({ conversationId, deps, messageIds });
  const started = deps.clock();
  const state = { committing: false };
  try {
    const { updated, entries } = await clearSteps(input, operation, state);
    return succeeded(input, operation, updated, entries);
  } catch (error) {
    const stageError = StageError.isInstance(error) ? error : new StageError('unexpected', error);
    const failure = {
      ok: false as const,
      operationId: operation.id,
      failureCode: stageError.failureCode,
      error: stageError.message,
      ...clientAttemptsOf(stageError),
    };
    // A commit that failed on the way back may still have committed: the journal says so.
    if (state.committing) {
      const outcome = await deps.persistence.listOperations(conversationId).then(
        (operations) => operations.find((op) => op.id === operation.id)?.status,
        () => undefined,
      );
      if (outcome === 'committed') {
        const rows = await deps.persistence.loadHistory(conversationId).catch(() => undefined);
        if (rows)
          return succeeded(
            input,
            operation,
            rows.filter((m) => messageIds.includes(m.id)),
            [],
          );
      }
      // Unknown: left `archived` for reconcile, which finishes it if the rows are unchanged, or undoes it.
      if (outcome === undefined) return failure;
    }
    await undoOperation({
      writer: operation.writer,
      operation: { operationId: operation.id, conversationId, messageIds },
      persistence: deps.persistence,
      cause: stageError.message,
    });
    return failure;
  } finally {
    result.stageMs.clear = (result.stageMs.clear ?? 0) + deps.clock() - started;
  }
}

/** Journal, archive (read back), then commit the placeholders; `state.committing` once the commit is under way. */
async function clearSteps(
  input: RunClearingInput,
  operation: CompactionOperation,
  state: { committing: boolean },
): Promise<{ updated: ConversationMessage[]; entries: ToolOutputEntry[] }> {
  const { selection, conversationId, deps, counts, signal } = input;
  const { persistence, archive } = deps;
  const { id: operationId, messageIds, writer } = operation;
  const messages = selection.outputs.map((o) => o.message);
  await atStage('unexpected', () =>
    persistence.recordOperation({ id: operationId, conversationId, kind: 'clear_tool_outputs', status: 'planned', messageIds, labels: [] }),
  );
  // As for the other stages: the operation is journaled `planned` when its stage starts.
  deps.emit({ type: 'stage', conversationId, stage: 'clear' });
  // Labels are chosen so that no write lands on a label another operation holds.
  let entries = toolOutputEntries(messages, { conversationId, operationId });
  const found = await atStage('archive_failed', () =>
    archive.read(
      conversationId,
      entries.map((e) => e.label),
    ),
  );
  const taken = new Set(found.map((e) => e.label));
  if (taken.size > 0) entries = toolOutputEntries(messages, { conversationId, operationId }, taken);
  await atStage('archive_failed', () => writer.writeVerified(entries, writeOptionsAfterLookup(taken)));
  await atStage('archive_failed', () => operation.archived());
  throwIfAborted(signal);

  const tokensOf = new Map(selection.outputs.map((o) => [o.message.id, counts.message(o.message)]));
  const cleared = clearedOutputs(entries, (id) => tokensOf.get(id)!);
  state.committing = true;
  const updated = await atStage('commit_failed', () => persistence.commitClearing({ conversationId, operationId, cleared, labels: [...writer.written] }));
  return { updated, entries };
}

function succeeded(
  input: RunClearingInput,
  operation: CompactionOperation,
  updated: readonly ConversationMessage[],
  written: readonly ArchiveEntry[],
): ClearingOutcome {
  const { history, conversationId, deps, counts } = input;
  const byId = new Map(updated.map((m) => [m.id, m]));
  const after = history.map((m) => byId.get(m.id) ?? m);
  const tokensFreed = history.reduce((sum, m) => sum + counts.context(m), 0) - after.reduce((sum, m) => sum + counts.context(m), 0);
  const labels = [...operation.writer.written];
  deps.emit({ type: 'tool_outputs_cleared', conversationId, operationId: operation.id, cleared: updated.length, tokensFreed, labels });
  return { ok: true, operationId: operation.id, history: after, cleared: updated.length, tokensFreed, entries: new Map(written.map((e) => [e.label, e])) };
}
