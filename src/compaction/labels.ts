/**
 * Labels: `compaction-batch-{conversationId}-{endTime ISO}`, deterministic so that a retried write
 * replaces rather than duplicates. When another batch already holds that label, a suffix
 * `~{operationId}.{n}` makes it unique: n starts at the batch's index in its operation and counts up
 * past labels the operation already used (still deterministic for the same operation).
 */
const ISO = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{3})?Z';
const BATCH_LABEL = new RegExp(`^compaction-batch-(.*)-(${ISO})(?:~([^~]+))?$`, 's');

export function baseBatchLabel(conversationId: string, end: string): string {
  return `compaction-batch-${conversationId}-${end}`;
}

export function batchLabel(
  conversationId: string,
  end: string,
  taken: ReadonlySet<string>,
  operationId: string,
  index: number,
): string {
  const base = baseBatchLabel(conversationId, end);
  if (!taken.has(base)) return base;
  let n = index;
  while (taken.has(`${base}~${operationId}.${n}`)) n++;
  return `${base}~${operationId}.${n}`;
}

export interface ParsedBatchLabel {
  conversationId: string;
  end: string;
  suffix?: string;
}

export function parseBatchLabel(label: string): ParsedBatchLabel | undefined {
  const match = BATCH_LABEL.exec(label);
  if (!match) return undefined;
  const parsed: ParsedBatchLabel = { conversationId: match[1]!, end: match[2]! };
  if (match[3] !== undefined) parsed.suffix = match[3];
  return parsed;
}

/** Transcript segments are keyed by their first message, which is archived exactly once. */
export function transcriptLabel(conversationId: string, firstMessageId: string): string {
  return `compaction-transcript-${conversationId}-${firstMessageId}`;
}
