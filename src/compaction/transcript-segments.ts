/**
 * The verbatim transcript archived beside each depth-0 batch, cut into segments of about
 * `transcriptSegmentTokens` (the retrieval unit of memory_read: ~20 turns finds evidence far more
 * often than single turns), never splitting a tool call from its result. Pure.
 */
import type { ConversationMessage, TranscriptSegment } from '../agent/types.js';
import { chunkByTokens } from './chunk.js';
import { transcriptLabel } from './labels.js';
import { renderTranscript } from './transcript-format.js';
import { timeSpan } from './time-span.js';

export function buildTranscriptSegments(
  messages: readonly ConversationMessage[],
  options: {
    conversationId: string;
    parentLabel: string;
    operationId: string;
    segmentTokens: number;
    countMessage: (message: ConversationMessage) => number;
  },
): TranscriptSegment[] {
  return chunkByTokens(messages, options.segmentTokens, options.countMessage).map((segment) => ({
    kind: 'transcript',
    label: transcriptLabel(options.conversationId, segment[0]!.id),
    conversationId: options.conversationId,
    depth: 0,
    ...timeSpan(segment.map((m) => m.createdAt)),
    count: segment.length,
    content: renderTranscript(segment),
    sourceIds: segment.map((m) => m.id),
    parentLabel: options.parentLabel,
    operationId: options.operationId,
    messages: segment.map((m) => ({ ...m })),
  }));
}
