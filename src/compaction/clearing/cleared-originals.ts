/**
 * Tier 3 meeting tier 2's work: a compacted message whose live text is a placeholder goes into its transcript segment
 * as it was appended, read from its `tool_output` entry, and that entry is then marked as superseded by the segment
 * (its `parentLabel`). So every archived message is verbatim in exactly one transcript segment, and a cleared one
 * still live is verbatim in exactly one `tool_output` entry no segment supersedes. An output tier 3 folds in the
 * same compaction that chose it for clearing is never cleared (`splitByFold`): its original is its live row, and it
 * has no entry to supersede.
 */
import type { ArchiveEntry, ConversationMessage } from '../../conversation/types.js';
import { MemfoldError } from '../../errors.js';
import type { Archive } from '../../archive/archive.js';

export interface ClearedOriginal {
  /** The message as appended. */
  original: ConversationMessage;
  /** Its `tool_output` entry; none for an output folded without being cleared. */
  label?: string;
}

/** Why `entry` does not hold the original of the cleared `message`, or undefined when it does. */
export function originalProblem(message: ConversationMessage, entry: ArchiveEntry | undefined): string | undefined {
  if (!entry) return `its tool output ${message.clearedOutputLabel} is not in the archive`;
  if (entry.kind !== 'tool_output' || entry.messages?.length !== 1) return `${entry.label} is not a tool output entry`;
  const original = entry.messages[0]!;
  if (original.id !== message.id || original.seq !== message.seq || original.toolCallId !== message.toolCallId) {
    return `${entry.label} holds another message (${original.id})`;
  }
  return undefined;
}

/**
 * The originals of the cleared messages among `messages`, by message id; throws `archive_error` when one is missing.
 * `verified`: `tool_output` entries this compaction wrote and read back under the same lock (its tier 2), by label;
 * they are not read again. Every other label is read from the archive.
 */
export async function readClearedOriginals(input: {
  messages: readonly ConversationMessage[];
  archive: Pick<Archive, 'read'>;
  conversationId: string;
  /** `tool_output` entries this compaction's tier 2 wrote and read back, by label. */
  entries?: ReadonlyMap<string, ArchiveEntry>;
  /** Outputs folded without being cleared (`splitByFold`): their live rows as stored, by message id. */
  uncleared?: ReadonlyMap<string, ConversationMessage>;
}): Promise<Map<string, ClearedOriginal>> {
  const { messages, archive, conversationId, entries: verified = new Map<string, ArchiveEntry>(), uncleared = new Map<string, ConversationMessage>() } = input;
  const cleared = messages.filter((m) => m.clearedOutputLabel !== undefined);
  const originals = new Map<string, ClearedOriginal>();
  for (const message of messages) {
    const original = uncleared.get(message.id);
    if (original) originals.set(message.id, { original });
  }
  if (cleared.length === 0) return originals;
  const unread = cleared.map((m) => m.clearedOutputLabel!).filter((label) => !verified.has(label));
  const entries = new Map(verified);
  if (unread.length > 0) for (const entry of await archive.read(conversationId, unread)) entries.set(entry.label, entry);
  for (const message of cleared) {
    const entry = entries.get(message.clearedOutputLabel!);
    const problem = originalProblem(message, entry);
    if (problem) throw new MemfoldError('archive_error', `Cannot archive cleared tool output ${message.id}: ${problem}`, { details: { id: message.id } });
    originals.set(message.id, { original: entry!.messages![0]!, label: entry!.label });
  }
  return originals;
}

/** The marks that supersede cleared tool outputs: each `tool_output` label under the transcript segment holding its original. */
export function supersededBy(
  segments: readonly ArchiveEntry[],
  originals: ReadonlyMap<string, ClearedOriginal>,
): Array<{ label: string; parentLabel: string }> {
  if (originals.size === 0) return [];
  return segments.flatMap((segment) =>
    segment.sourceIds.flatMap((id) => {
      const label = originals.get(id)?.label;
      return label === undefined ? [] : [{ label, parentLabel: segment.label }];
    }),
  );
}
