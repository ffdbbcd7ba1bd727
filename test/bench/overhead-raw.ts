/**
 * The raw limit beside `overhead`'s compaction: what the stores alone take for the same rows, with no memfold code
 * between. A conversation of N messages is appended through memfold (untimed), memfold is closed, then three
 * plain steps are timed on the same database and a fresh LanceDB folder:
 * - `read`: the live rows read back (`select … order by seq`, `content` as its JSON text);
 * - `append`: that text appended to a LanceDB table as rows (`table.add` of an Arrow table of id, conversation,
 *   text, built by columns);
 * - `delete`: the rows deleted by id (`delete … where id = any($1)`).
 * The three run once first on a warm-up conversation of 200 messages, as the compaction's case warms up. PGlite is
 * opened as memfold opens it (its data directory, the same buffer pool); PostgreSQL through `pg`.
 */
import path from 'node:path';
import { createMemfold } from '../../src/memfold.js';
import { PGLITE_SHARED_BUFFERS } from '../../src/persistence/pglite/pglite-dialect.js';
import { Table, Utf8, vectorFromArray } from 'apache-arrow';
import { createBenchDatabase, syntheticMessages, tempDir, tempHome, timed } from './bench-kit.js';

export interface RawLimit {
  backend: 'pglite' | 'postgres';
  messages: number;
  readMs: number;
  appendMs: number;
  deleteMs: number;
  totalMs: number;
  usPerMessage: number;
}

const CONVERSATION = 'bench-raw';
const APPEND_BATCH = 1_000;
const WARM_UP = 'warm-up';
const WARM_UP_MESSAGES = 200;
const SELECT = `select id, seq, role, kind, content::text as content, created_at from memfold.messages
  where namespace = 'default' and conversation_id = $1 and compacted_by is null order by seq`;
const DELETE = `delete from memfold.messages where namespace = 'default' and conversation_id = $1 and id = any($2::text[])`;

/** A query runner over the store memfold used: rows back, parsed by the driver. */
interface RawStore {
  query(text: string, params: unknown[]): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

async function openRaw(backend: RawLimit['backend'], home: string, url: string | undefined): Promise<RawStore> {
  if (backend === 'postgres') {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return { query: async (text, params) => (await client.query(text, params)).rows, close: () => client.end() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create({
    dataDir: path.join(home, 'pg'),
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
  });
  return { query: async (text, params) => (await db.query<Record<string, unknown>>(text, params)).rows, close: () => db.close() };
}

/** The raw steps on `n` fresh messages, in this process (`overhead.ts raw <backend> <n>`). */
export async function runRawLimit(backend: RawLimit['backend'], n: number, databaseUrl: string | undefined): Promise<RawLimit> {
  const home = await tempHome(`overhead-raw-${backend}`);
  const lance = await tempDir('overhead-raw-lance');
  const database = backend === 'postgres' ? await createBenchDatabase(databaseUrl!) : undefined;
  try {
    const memfold = await createMemfold({ env: {}, config: { home: home.dir, ...(database ? { databaseUrl: database.url } : {}) } });
    try {
      await memfold.append(WARM_UP, syntheticMessages(0, WARM_UP_MESSAGES));
      for (let i = 0; i < n; i += APPEND_BATCH) await memfold.append(CONVERSATION, syntheticMessages(i, Math.min(APPEND_BATCH, n - i)));
    } finally {
      await memfold.close();
    }
    const store = await openRaw(backend, home.dir, database?.url);
    try {
      const { connect } = await import('@lancedb/lancedb');
      const table = await (await connect(lance.dir)).createTable('raw', [{ id: 'seed', conversation_id: CONVERSATION, text: 'seed' }]);
      const steps = async (conversationId: string) => {
        const { value: rows, ms: readMs } = await timed(() => store.query(SELECT, [conversationId]));
        const ids = rows.map((row) => row.id as string);
        const columns = {
          id: vectorFromArray(ids, new Utf8()),
          conversation_id: vectorFromArray(
            ids.map(() => conversationId),
            new Utf8(),
          ),
          text: vectorFromArray(
            rows.map((row) => row.content as string),
            new Utf8(),
          ),
        };
        const { ms: appendMs } = await timed(() => table.add(new Table(columns)));
        const { ms: deleteMs } = await timed(() => store.query(DELETE, [conversationId, ids]));
        const totalMs = readMs + appendMs + deleteMs;
        return { backend, messages: rows.length, readMs, appendMs, deleteMs, totalMs, usPerMessage: (totalMs * 1000) / rows.length };
      };
      await steps(WARM_UP);
      const measured = await steps(CONVERSATION);
      table.close();
      return measured;
    } finally {
      await store.close();
    }
  } finally {
    await database?.drop();
    await Promise.all([home.remove(), lance.remove()]);
  }
}
