/** What a conversation's clip-archive row (seq 0) records of its compactions, read inside a commit's transaction. */
import { sql, type Kysely } from 'kysely';
import type { Database } from './kysely-schema.js';

/** The clip-archive row's content, if the conversation has one. */
async function clipArchiveContent(trx: Kysely<Database>, namespace: string, conversationId: string) {
  const row = await trx
    .selectFrom('messages')
    .select('content')
    .where('namespace', '=', namespace)
    .where('conversation_id', '=', conversationId)
    .where('seq', '=', 0)
    .executeTakeFirst();
  return row?.content;
}

/** What the clip-archive row says the last compaction that archived messages saw (a re-summarization keeps it). */
export async function clipArchiveThroughSeq(trx: Kysely<Database>, namespace: string, conversationId: string): Promise<number | undefined> {
  return (await clipArchiveContent(trx, namespace, conversationId))?.compactedThroughSeq;
}

/**
 * Where the conversation's opening starts: as the clip-archive records it (undefined on one written before it was
 * kept) or, at the first compaction (no clip-archive yet), the conversation's lowest seq.
 */
export async function openingSeqOf(trx: Kysely<Database>, namespace: string, conversationId: string): Promise<number | undefined> {
  const clip = await clipArchiveContent(trx, namespace, conversationId);
  if (clip !== undefined) return clip.openingSeq;
  const row = await trx
    .selectFrom('messages')
    .select(sql<string | null>`min(seq)`.as('first'))
    .where('namespace', '=', namespace)
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
  return row?.first === null || row?.first === undefined ? undefined : Number(row.first);
}
