/** The id of a conversation's clip-archive row (one per conversation, always seq 0), in every store. */
export function clipArchiveId(conversationId: string): string {
  return `clip-archive-${conversationId}`;
}
