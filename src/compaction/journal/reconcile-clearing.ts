/**
 * Recovery of a tool-output clearing (tier 2) a crash left `archived`: when every output it names is in its own
 * `tool_output` entry, read back, equal to the live row, and that row is still an uncleared tool result, the commit
 * runs (the placeholders replace the texts). Anything else is undone by the caller (reconcile.ts). Pure checks apart
 * from the reads and the commit.
 */
import type { ArchiveEntry, ConversationMessage } from '../../conversation/types.js';
import type { Archive } from '../../archive/archive.js';
import type { CompactionOperation, PersistenceProvider } from '../../persistence/persistence-provider.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { clearedPlaceholder } from '../clearing/clear-tool-outputs.js';
import { messageKey } from './operation-check.js';

/**
 * Why an `archived` clearing cannot be finished, or undefined when it can: each named message is live, an uncleared
 * tool result, and verbatim in exactly one of the operation's `tool_output` entries, which hold nothing else.
 */
export function unfinishableClearing(
  operation: CompactionOperation,
  entries: readonly ArchiveEntry[],
  live: readonly ConversationMessage[],
): string | undefined {
  if (operation.status !== 'archived') return `status is ${operation.status}, not archived`;
  if (operation.messageIds.length === 0) return 'the journal names no messages';
  const own = entries.filter((e) => e.operationId === operation.id && e.kind === 'tool_output');
  const liveById = new Map(live.map((m) => [m.id, m]));
  const byMessage = new Map<string, ArchiveEntry[]>();
  for (const entry of own) for (const id of entry.sourceIds) byMessage.set(id, [...(byMessage.get(id) ?? []), entry]);
  for (const id of operation.messageIds) {
    const row = liveById.get(id);
    if (row?.role !== 'tool') return `message ${id} is not a live tool result`;
    if (row.clearedOutputLabel !== undefined) return `message ${id} is already cleared`;
    if (row.pinned === true) return `message ${id} was pinned since`;
    const copies = byMessage.get(id) ?? [];
    if (copies.length !== 1) return `message ${id} is in ${copies.length} tool output entries`;
    const copy = copies[0]!.messages;
    if (copy?.length !== 1 || messageKey(copy[0]!) !== messageKey(row)) return `the archived copy of message ${id} differs from the live row`;
  }
  if (own.length !== operation.messageIds.length) return 'the archive holds tool outputs the journal does not name';
  return undefined;
}

export interface ClearingFinishDeps {
  archive: Archive;
  persistence: PersistenceProvider;
  tokens: Pick<TokenCounter, 'countMessage'>;
}

/** Finish `operation` when it can be (returns undefined), or say why not (nothing was changed). */
export async function finishClearing(operation: CompactionOperation, deps: ClearingFinishDeps): Promise<string | undefined> {
  const { archive, persistence, tokens } = deps;
  const { conversationId } = operation;
  const entries = await archive.read(conversationId, operation.labels);
  const live = (await persistence.loadHistory(conversationId)).filter((m) => m.kind !== 'clip_archive');
  const problem = unfinishableClearing(operation, entries, live);
  if (problem) return problem;
  const liveById = new Map(live.map((m) => [m.id, m]));
  const own = entries.filter((e) => e.operationId === operation.id);
  const cleared = own.map((e) => {
    const row = liveById.get(e.sourceIds[0]!)!;
    return { id: row.id, label: e.label, content: clearedPlaceholder(e.label, tokens.countMessage(row)) };
  });
  await persistence.commitClearing({ conversationId, operationId: operation.id, cleared, labels: own.map((e) => e.label) });
  return undefined;
}
