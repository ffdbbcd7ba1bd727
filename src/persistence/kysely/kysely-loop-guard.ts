/** The loop guard's record of each conversation (`compaction_pauses`): read, write, clear, scoped by namespace. */
import { sql, type Kysely } from 'kysely';
import { requireText } from '../../conversation/text.js';
import { checkLoopGuardUpdate, unknownConversation } from '../loop-guard-update.js';
import type { LoopGuardState, LoopGuardUpdate } from '../persistence-provider.js';
import { guard } from '../persistence-error.js';
import { toIso } from './kysely-row-mapping.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';

interface PauseRow {
  streak: number | string;
  trigger_tokens: number | string;
  paused_at: Date | string | null;
  updated_at: Date | string;
}

function toState(row: PauseRow): LoopGuardState {
  const state: LoopGuardState = { streak: Number(row.streak), trigger: Number(row.trigger_tokens), updatedAt: toIso(row.updated_at) };
  if (row.paused_at !== null) state.pausedAt = toIso(row.paused_at);
  return state;
}

export async function getLoopGuardState(db: Kysely<Database>, context: StoreContext, conversationId: string): Promise<LoopGuardState | undefined> {
  const id = requireText(conversationId, 'conversationId');
  const row = await guard(`read the loop guard of conversation ${JSON.stringify(id)}`, () =>
    db
      .selectFrom('compaction_pauses')
      .select(['streak', 'trigger_tokens', 'paused_at', 'updated_at'])
      .where('namespace', '=', context.namespace)
      .where('conversation_id', '=', id)
      .executeTakeFirst(),
  );
  return row === undefined ? undefined : toState(row);
}

/**
 * Upsert the record from the conversation's own row, so a conversation the store does not hold gets none (and is
 * refused). A pause already set keeps its first time while the update keeps it paused.
 */
export async function setLoopGuardState(db: Kysely<Database>, context: StoreContext, conversationId: string, input: LoopGuardUpdate): Promise<LoopGuardState> {
  const { conversationId: id, update } = checkLoopGuardUpdate(conversationId, input);
  const now = context.clock().toISOString();
  const row = await guard(`write the loop guard of conversation ${JSON.stringify(id)}`, () =>
    db
      .insertInto('compaction_pauses')
      .columns(['namespace', 'conversation_id', 'streak', 'trigger_tokens', 'paused_at', 'updated_at'])
      .expression(
        db
          .selectFrom('conversations')
          .select([
            'namespace',
            'id',
            sql<number>`${update.streak}::integer`.as('streak'),
            sql<number>`${update.trigger}::integer`.as('trigger_tokens'),
            sql<string | null>`${update.paused ? now : null}::timestamptz`.as('paused_at'),
            sql<string>`${now}::timestamptz`.as('updated_at'),
          ])
          .where('namespace', '=', context.namespace)
          .where('id', '=', id),
      )
      .onConflict((conflict) =>
        conflict.columns(['namespace', 'conversation_id']).doUpdateSet((eb) => ({
          streak: eb.ref('excluded.streak'),
          trigger_tokens: eb.ref('excluded.trigger_tokens'),
          paused_at: update.paused ? sql`coalesce(compaction_pauses.paused_at, excluded.paused_at)` : null,
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .returning(['streak', 'trigger_tokens', 'paused_at', 'updated_at'])
      .executeTakeFirst(),
  );
  if (row === undefined) throw unknownConversation(id);
  return toState(row);
}

export async function clearLoopGuardState(db: Kysely<Database>, context: StoreContext, conversationId: string): Promise<boolean> {
  const id = requireText(conversationId, 'conversationId');
  const result = await guard(`clear the loop guard of conversation ${JSON.stringify(id)}`, () =>
    db.deleteFrom('compaction_pauses').where('namespace', '=', context.namespace).where('conversation_id', '=', id).executeTakeFirst(),
  );
  return Number(result.numDeletedRows) > 0;
}
