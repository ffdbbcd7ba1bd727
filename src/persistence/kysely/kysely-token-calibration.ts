/** Each conversation's token calibration (`token_calibrations`): read and write, scoped by namespace. */
import { sql, type Kysely } from 'kysely';
import { requireText } from '../../conversation/text.js';
import { unknownConversation } from '../loop-guard-update.js';
import type { TokenCalibration, TokenCalibrationUpdate } from '../persistence-provider.js';
import { guard } from '../persistence-error.js';
import { checkTokenCalibrationUpdate } from '../token-calibration-update.js';
import { toIso } from './kysely-row-mapping.js';
import type { Database } from './kysely-schema.js';
import type { StoreContext } from './kysely-store-context.js';

interface CalibrationRow {
  factor: number | string;
  prompt_tokens: number | string;
  estimated_tokens: number | string;
  observed_at: Date | string;
}

const COLUMNS = ['factor', 'prompt_tokens', 'estimated_tokens', 'observed_at'] as const;

function toCalibration(row: CalibrationRow): TokenCalibration {
  return {
    factor: Number(row.factor),
    promptTokens: Number(row.prompt_tokens),
    estimatedTokens: Number(row.estimated_tokens),
    observedAt: toIso(row.observed_at),
  };
}

export async function getTokenCalibration(db: Kysely<Database>, context: StoreContext, conversationId: string): Promise<TokenCalibration | undefined> {
  const id = requireText(conversationId, 'conversationId');
  const row = await guard(`read the token calibration of conversation ${JSON.stringify(id)}`, () =>
    db.selectFrom('token_calibrations').select(COLUMNS).where('namespace', '=', context.namespace).where('conversation_id', '=', id).executeTakeFirst(),
  );
  return row === undefined ? undefined : toCalibration(row);
}

/** Upsert the row from the conversation's own row, so a conversation the store does not hold gets none (and is refused). */
export async function setTokenCalibration(
  db: Kysely<Database>,
  context: StoreContext,
  conversationId: string,
  input: TokenCalibrationUpdate,
): Promise<TokenCalibration> {
  const { conversationId: id, update } = checkTokenCalibrationUpdate(conversationId, input);
  const now = context.clock().toISOString();
  const row = await guard(`write the token calibration of conversation ${JSON.stringify(id)}`, () =>
    db
      .insertInto('token_calibrations')
      .columns(['namespace', 'conversation_id', ...COLUMNS])
      .expression(
        db
          .selectFrom('conversations')
          .select([
            'namespace',
            'id',
            sql<number>`${update.factor}::double precision`.as('factor'),
            sql<number>`${update.promptTokens}::integer`.as('prompt_tokens'),
            sql<number>`${update.estimatedTokens}::integer`.as('estimated_tokens'),
            sql<string>`${now}::timestamptz`.as('observed_at'),
          ])
          .where('namespace', '=', context.namespace)
          .where('id', '=', id),
      )
      .onConflict((conflict) =>
        conflict.columns(['namespace', 'conversation_id']).doUpdateSet((eb) => ({
          factor: eb.ref('excluded.factor'),
          prompt_tokens: eb.ref('excluded.prompt_tokens'),
          estimated_tokens: eb.ref('excluded.estimated_tokens'),
          observed_at: eb.ref('excluded.observed_at'),
        })),
      )
      .returning(COLUMNS)
      .executeTakeFirst(),
  );
  if (row === undefined) throw unknownConversation(id);
  return toCalibration(row);
}

/** Drop the conversation's calibration inside the caller's transaction (a compaction's commit). */
export async function dropTokenCalibration(trx: Kysely<Database>, namespace: string, conversationId: string): Promise<void> {
  await trx.deleteFrom('token_calibrations').where('namespace', '=', namespace).where('conversation_id', '=', conversationId).execute();
}
