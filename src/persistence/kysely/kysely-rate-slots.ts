/**
 * Start slots of a rate limit shared by every process on the database (`memfold_rate_slots`, migration 010): one
 * statement reserves the next start for a key, spaced after the previous reservation, and says how long to wait for
 * it. Atomic (the row's lock orders concurrent reservations) and timed by the database's clock alone, so processes
 * on machines whose clocks differ still space their requests.
 */
import { sql, type Kysely } from 'kysely';
import { InvalidArgumentError } from '../../errors.js';
import { requireText } from '../../conversation/text.js';
import { guard } from '../persistence-error.js';
import type { Database } from './kysely-schema.js';

/**
 * Reserve the next start of `key`: at the row's `next_at`, or now when that has passed; the row then moves on to
 * the reserved start + `intervalMs`. Returns the ms the caller must still wait, from when this resolves: the
 * database's wait to the reserved start, less the time since the statement was sent (on a connection already
 * taken from the pool, so waiting for one does not count), which covers the answer waiting for a busy event loop.
 */
export async function reserveRateSlot(db: Kysely<Database>, key: string, intervalMs: number): Promise<number> {
  const slotKey = requireText(key, 'key');
  if (typeof intervalMs !== 'number' || !Number.isFinite(intervalMs) || intervalMs <= 0) {
    throw new InvalidArgumentError('intervalMs', `must be a positive number of ms (got ${String(intervalMs)})`);
  }
  const spacing = sql`(${intervalMs}::double precision * interval '1 millisecond')`;
  // now() is the statement's transaction start, the same in every part of the statement.
  return guard(`reserve a rate-limit slot for ${JSON.stringify(slotKey)}`, () =>
    db.connection().execute(async (connection) => {
      const sent = performance.now();
      const result = await sql<{ wait_ms: number | string }>`
        insert into memfold_rate_slots as slots (key, next_at)
        values (${slotKey}, now() + ${spacing})
        on conflict (key) do update set next_at = greatest(slots.next_at, now()) + ${spacing}
        returning extract(epoch from (slots.next_at - ${spacing} - now()))::double precision * 1000 as wait_ms`.execute(connection);
      return Math.max(0, Number(result.rows[0]!.wait_ms) - (performance.now() - sent));
    }),
  );
}
