/**
 * What the crash test (crash-recovery.test.ts) and the soak (test/soak/) share: the kill points with their weights,
 * the tool-heavy turns that make tier 2 run, and the triggers that make a listed conversation's commit sleep inside
 * its transaction, so a SIGKILL lands mid-commit.
 */
import type pg from 'pg';
import type { TurnShape } from '../support/arbitraries.js';
import type { KillPoint } from './children/crash-job.js';

/** How many kinds of kill point `pickKillPoint` chooses from. */
export const KILL_POINT_KINDS = 7;

/** A kill point of a compaction, each kind as likely. */
export function pickKillPoint(rand: () => number): KillPoint {
  return killPointOfKind(Math.floor(rand() * KILL_POINT_KINDS), rand);
}

/** The kill point of kind `kind` (0 to KILL_POINT_KINDS - 1), its parameters from `rand`. */
export function killPointOfKind(kind: number, rand: () => number): KillPoint {
  const int = (min: number, max: number) => min + Math.floor(rand() * (max - min + 1));
  switch (kind) {
    case 0:
      return { point: 'plan' };
    case 1:
      return { point: 'fold', n: int(1, 3) };
    case 2:
      return { point: 'write', n: int(1, 2) };
    case 3:
      return { point: 'mark', n: 1 };
    case 4:
      return { point: 'commit', ms: 150 };
    case 5:
      return { point: 'after-commit' };
    default:
      return { point: 'timer', ms: int(0, 800) };
  }
}

const WORDS = ['order', 'ticket', 'refund', 'ünïcødé', "o'brien", '%_*', 'shipment', 'invoice', 'SKU-42', 'aisle', 'stock', 'flight', 'seat', 'baggage'];

/** `count` turns, each with one or two tool calls whose outputs are 40 to 120 words, from `rand`. */
export function toolHeavyTurns(rand: () => number, count: number): TurnShape[] {
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
  return Array.from({ length: count }, () => ({
    user: words(8),
    tools: Array.from({ length: 1 + Math.floor(rand() * 2) }, () => ({
      name: 'lookup',
      args: JSON.stringify({ q: words(2) }),
      result: words(40 + Math.floor(rand() * 80)),
    })),
    answer: words(10),
  }));
}

/**
 * `count` tool-heavy turns whose last makes two calls, both outputs 80 to 120 words (far larger than a placeholder):
 * the verbatim tail of a compaction run on them holds the older call's output, which tier 2 clears (only the last
 * call's stays whole), and every later tier 3 folds, superseding its `tool_output` entry. With random turns only,
 * a run whose last turn made one call clears nothing beside tier 3's fold, and outputs cleared from the opening turn,
 * kept verbatim, are never folded.
 */
export function clearingRunTurns(rand: () => number, count: number): TurnShape[] {
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
  const first = toolHeavyTurns(rand, count - 1);
  const call = () => ({ name: 'lookup', args: JSON.stringify({ q: words(2) }), result: words(80 + Math.floor(rand() * 40)) });
  return [...first, { user: words(8), tools: [call(), call()], answer: words(10) }];
}

/**
 * A commit of a conversation listed in `memfold_test_slow_commit` sleeps 1 s inside its transaction: the compaction's
 * (on the clip-archive insert) and the clearing's (once per statement, whatever the number of rows it clears).
 * Installed once, after memfold migrated the database; sets the admin session's search_path to memfold's schema.
 *
 * The database's sessions also check every 25 ms, while a statement runs, that their client is still there
 * (client_connection_check_interval): a child killed in the middle of the sleep then has its transaction rolled back
 * at once, as when a process dies between statements, instead of the server sleeping out the second while the
 * reconcile that follows waits on the dead transaction's locks.
 */
export async function installSlowCommit(admin: pg.Client): Promise<void> {
  // memfold's tables are in its own schema, where memfold's sessions (search_path = memfold) also find the flag table.
  await admin.query('set search_path to memfold, public');
  const { rows } = await admin.query<{ name: string }>('select current_database() as name');
  await admin.query(`alter database "${rows[0]!.name.replaceAll('"', '""')}" set client_connection_check_interval = '25ms'`);
  await admin.query(`create table memfold_test_slow_commit (conversation_id text primary key)`);
  await admin.query(`create function memfold_test_slow() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from memfold_test_slow_commit where conversation_id = new.conversation_id) then perform pg_sleep(1); end if;
      return new;
    end $$`);
  await admin.query(
    `create trigger memfold_test_slow before insert on messages for each row when (new.kind = 'clip_archive') execute function memfold_test_slow()`,
  );
  await admin.query(`create function memfold_test_slow_update() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from changed c join memfold_test_slow_commit s on s.conversation_id = c.conversation_id) then perform pg_sleep(1); end if;
      return null;
    end $$`);
  await admin.query(
    `create trigger memfold_test_slow_update after update on messages referencing new table as changed for each statement execute function memfold_test_slow_update()`,
  );
}
