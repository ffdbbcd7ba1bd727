import type { Archive, ArchiveErasure } from './archive.js';

/** Every entry of the conversation out of the archive: physically where the adapter can, else by label. */
export async function eraseArchived(archive: Archive, conversationId: string): Promise<ArchiveErasure> {
  if (archive.eraseConversation) return archive.eraseConversation(conversationId);
  const entries = await archive.list({ conversationId });
  await archive.delete(
    conversationId,
    entries.map((entry) => entry.label),
  );
  return { entries: entries.length, rowsRewritten: 0 };
}
