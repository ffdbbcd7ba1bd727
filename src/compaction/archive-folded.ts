/**
 * The archive step of a compaction: each chunk becomes a depth-0 batch (its summary) with the verbatim
 * transcript segments under it; all are written and read back before anything else happens.
 */
import type { ConversationMessage, SummaryBatch } from '../conversation/types.js';
import type { ArchiveWriter } from './archive-writer.js';
import { buildBatches } from './batch-builder.js';
import { distinctSessions } from './sessions.js';
import type { CompactionDeps } from './compaction-deps.js';
import type { FoldedChunks } from './fold-compactable.js';
import { supersededBy, type ClearedOriginal } from './cleared-originals.js';
import { buildTranscriptSegments } from './transcript-segments.js';

export interface ArchiveTarget {
  conversationId: string;
  operationId: string;
  writer: ArchiveWriter;
  /** The session of a compacted message (the plan's `sessionOf`): batches and segments record the sessions they cover. */
  sessionOf?: (message: ConversationMessage) => string | undefined;
  /**
   * The originals of cleared tool outputs among the chunks (`cleared-originals.ts`): their segments hold the
   * originals, and their `tool_output` entries are marked as superseded once the segments are read back.
   */
  originals?: ReadonlyMap<string, ClearedOriginal>;
}

export async function archiveFolded(
  folded: FoldedChunks,
  target: ArchiveTarget,
  deps: Pick<CompactionDeps, 'archive' | 'settings'>,
  countMessage: (m: ConversationMessage) => number,
): Promise<SummaryBatch[]> {
  const { conversationId, operationId, writer, sessionOf } = target;
  const originals = target.originals ?? new Map<string, ClearedOriginal>();
  const verbatim = (chunk: readonly ConversationMessage[]) => chunk.map((m) => originals.get(m.id)?.original ?? m);
  const drafts = folded.chunks.map((chunk, i) => ({
    depth: 0,
    summary: folded.steps[i]!.text,
    sourceTimes: chunk.map((m) => m.createdAt),
    sourceIds: chunk.map((m) => m.id),
    ...(sessionOf ? { sessions: distinctSessions(chunk.map(sessionOf)) } : {}),
  }));
  const build = (taken: ReadonlySet<string>) => {
    const built = buildBatches(conversationId, operationId, drafts, taken);
    const segments = folded.chunks.flatMap((chunk, i) =>
      buildTranscriptSegments(verbatim(chunk), {
        conversationId,
        parentLabel: built[i]!.label,
        operationId,
        taken,
        segmentTokens: deps.settings.transcriptSegmentTokens,
        countMessage,
        ...(sessionOf ? { sessionOf } : {}),
      }),
    );
    return { built, entries: [...built, ...segments] };
  };
  // Labels are chosen so that no write lands on a label another operation holds.
  let labelled = build(new Set());
  const taken = new Set(
    (
      await deps.archive.read(
        conversationId,
        labelled.entries.map((e) => e.label),
      )
    ).map((e) => e.label),
  );
  if (taken.size > 0) labelled = build(taken);
  await writer.writeVerified(labelled.entries);
  await writer.markEach(
    supersededBy(
      labelled.entries.filter((e) => e.kind === 'transcript'),
      originals,
    ),
  );
  return labelled.built;
}
