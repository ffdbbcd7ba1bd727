// Scratch measurement: loadHistory of a conversation with many overlay rows and few live ones.
import { sql } from 'kysely';
import { openKyselyStore } from '../src/persistence/kysely/kysely-store.js';
import { createPostgresTestDatabase } from '../test/support/backends.js';

const database = await createPostgresTestDatabase(process.env.DATABASE_URL!);
const { persistence, db } = await openKyselyStore({ dialect: 'postgres', databaseUrl: database.url });
try {
  const N = Number(process.env.N ?? 200_000);
  const LIVE = 50;
  const now = new Date().toISOString();
  // Several conversations so the table is not just one conversation.
  for (const conv of ['big', 'other1', 'other2']) {
    await sql`insert into conversations (namespace, id, created_at, updated_at, next_seq) values ('default', ${conv}, ${now}, ${now}, ${N + 1})`.execute(db);
    await sql`insert into compaction_operations (id, namespace, conversation_id, status, mode, created_at, updated_at) values (${'op-' + conv}, 'default', ${conv}, 'committed', 'overlay', ${now}, ${now})`.execute(db);
    await sql`insert into messages (namespace, conversation_id, id, seq, role, content, created_at, compacted_by)
      select 'default', ${conv}, 'm' || g, g, 'user', jsonb_build_object('text', 'message number ' || g || ' with some words in it'), ${now}::timestamptz,
             case when g <= ${N - LIVE} then ${'op-' + conv} else null end
      from generate_series(1, ${N}) g`.execute(db);
  }
  await sql`insert into conversations (namespace, id, created_at, updated_at, next_seq) values ('default', 'small', ${now}, ${now}, ${LIVE + 1})`.execute(db);
  await sql`insert into messages (namespace, conversation_id, id, seq, role, content, created_at)
    select 'default', 'small', 'm' || g, g, 'user', jsonb_build_object('text', 'message number ' || g || ' with some words in it'), ${now}::timestamptz
    from generate_series(1, ${LIVE}) g`.execute(db);
  await sql`analyze messages`.execute(db);
  const time = async (label: string, conv = 'big') => {
    const samples: number[] = [];
    for (let i = 0; i < 25; i++) {
      const t0 = performance.now();
      const rows = await persistence.loadHistory(conv);
      samples.push(performance.now() - t0);
      if (rows.length !== LIVE) throw new Error(`expected ${LIVE} rows, got ${rows.length}`);
    }
    samples.sort((a, b) => a - b);
    const plan = await sql<{ 'QUERY PLAN': string }>`explain select * from messages where namespace = 'default' and conversation_id = 'big' and compacted_by is null order by seq`.execute(db);
    console.log(`${label}: median ${samples[12]!.toFixed(2)} ms, p90 ${samples[22]!.toFixed(2)} ms; plan: ${plan.rows[0]!['QUERY PLAN']}`);
  };
  await time(`a conversation of ${LIVE} rows, no overlay rows (as in delete mode)`, 'small');
  await time(`with messages_live_idx, ${N} rows of which ${LIVE} live`);
  await sql`drop index messages_live_idx`.execute(db);
  await sql`analyze messages`.execute(db);
  await time('without it');
  const t0 = performance.now();
  const all = await persistence.loadHistory('big', { includeCompacted: true });
  console.log(`includeCompacted: ${all.length} rows in ${(performance.now() - t0).toFixed(0)} ms`);
} finally {
  await persistence.close();
  await database.drop();
}
