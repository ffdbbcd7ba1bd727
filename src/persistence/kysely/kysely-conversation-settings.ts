/** Each conversation's settings overrides (`conversation_settings`): read, write and clear, scoped by namespace. */
import type { Kysely } from 'kysely';
import { requireConversationId } from '../../conversation/conversation-id.js';
import { checkConversationSettings } from '../conversation-settings-input.js';
import type { ConversationSettingsRecord } from '../persistence-provider.js';
import { guard } from '../persistence-error.js';
import { toIso } from './kysely-row-mapping.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';

function toRecord(row: { settings: Record<string, unknown> | string; updated_at: Date | string }): ConversationSettingsRecord {
  const settings = typeof row.settings === 'string' ? (JSON.parse(row.settings) as Record<string, unknown>) : row.settings;
  return { settings, updatedAt: toIso(row.updated_at) };
}

export async function getConversationSettings(
  db: Kysely<Database>,
  context: StoreContext,
  conversationId: string,
): Promise<ConversationSettingsRecord | undefined> {
  const id = requireConversationId(conversationId);
  const row = await guard(`read the settings of conversation ${JSON.stringify(id)}`, () =>
    db
      .selectFrom('conversation_settings')
      .select(['settings', 'updated_at'])
      .where('namespace', '=', context.namespace)
      .where('conversation_id', '=', id)
      .executeTakeFirst(),
  );
  return row === undefined ? undefined : toRecord(row);
}

export async function setConversationSettings(
  db: Kysely<Database>,
  context: StoreContext,
  conversationId: string,
  input: Record<string, unknown>,
): Promise<ConversationSettingsRecord> {
  const { conversationId: id, json } = checkConversationSettings(conversationId, input);
  const now = context.clock().toISOString();
  const row = await guard(`write the settings of conversation ${JSON.stringify(id)}`, () =>
    db
      .insertInto('conversation_settings')
      .values({ namespace: context.namespace, conversation_id: id, settings: json, updated_at: now })
      .onConflict((conflict) =>
        conflict
          .columns(['namespace', 'conversation_id'])
          .doUpdateSet((eb) => ({ settings: eb.ref('excluded.settings'), updated_at: eb.ref('excluded.updated_at') })),
      )
      .returning(['settings', 'updated_at'])
      .executeTakeFirstOrThrow(),
  );
  return toRecord(row);
}

export async function clearConversationSettings(db: Kysely<Database>, context: StoreContext, conversationId: string): Promise<boolean> {
  const id = requireConversationId(conversationId);
  const result = await guard(`clear the settings of conversation ${JSON.stringify(id)}`, () =>
    db.deleteFrom('conversation_settings').where('namespace', '=', context.namespace).where('conversation_id', '=', id).executeTakeFirst(),
  );
  return result.numDeletedRows > 0n;
}
