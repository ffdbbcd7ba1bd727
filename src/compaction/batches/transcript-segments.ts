/**
 * The verbatim transcript archived beside each depth-0 batch, cut into segments of about
 * `transcriptSegmentTokens` (the retrieval unit of memory_read: ~20 turns finds evidence far more
 * often than single turns), never splitting a tool call from its result. Pure.
 *
 * The last segment takes in a remainder under half a segment (up to REMAINDER_STRETCH segments): a compaction's
 * last few messages alone made a segment that memory_read ranked and showed poorly (LoCoMo readable evidence at
 * 4k .875 → .881, README "When memfold compacts").
 */
import type { ConversationMessage, TranscriptSegment } from '../../conversation/types.js';
import { chunkByTokens, REMAINDER_STRETCH } from '../fold/chunk.js';
import { uniqueLabel } from '../format/labels.js';
import { distinctSessions } from '../../conversation/sessions.js';
import { renderTranscript } from '../format/transcript-format.js';
import { timeSpan } from '../format/time-span.js';

export function buildTranscriptSegments(
  messages: readonly ConversationMessage[],
  options: {
    conversationId: string;
    parentLabel: string;
    operationId: string;
    segmentTokens: number;
    countMessage: (message: ConversationMessage) => number;
    /** Labels already in the archive (a taken label gets a longer hash, see labels.ts). */
    taken?: ReadonlySet<string>;
    /** The session of a message (the plan's `sessionOf`); a segment records the sessions of its messages. */
    sessionOf?: (message: ConversationMessage) => string | undefined;
  },
): TranscriptSegment[] {
  const used = new Set(options.taken);
  return chunkByTokens(messages, options.segmentTokens, options.countMessage, Math.floor(options.segmentTokens * REMAINDER_STRETCH)).map((segment) => {
    const span = timeSpan(segment.map((m) => m.createdAt));
    const label = uniqueLabel({ kind: 'transcript', depth: 0, time: span.start, sourceIds: segment.map((m) => m.id) }, used);
    used.add(label);
    const sessions = options.sessionOf ? distinctSessions(segment.map(options.sessionOf)) : [];
    return {
      kind: 'transcript',
      label,
      conversationId: options.conversationId,
      depth: 0,
      ...span,
      count: segment.length,
      content: renderTranscript(segment),
      sourceIds: segment.map((m) => m.id),
      parentLabel: options.parentLabel,
      operationId: options.operationId,
      messages: segment.map((m) => ({ ...m })),
      ...(sessions.length > 0 ? { sessions } : {}),
    };
  });
}
