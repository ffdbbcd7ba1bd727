/**
 * memfold's tables live in their own schema (`memfold`, or MEMFOLD_DATABASE_SCHEMA), so an application database's own
 * `conversations` and `messages` never meet them; a store made before that (its tables in `public`) is moved there
 * whole by migration 011; and a failed migration run leaves nothing behind, with one short error naming the schema and
 * the setting. On PGlite and PostgreSQL, through createMemfold.
 */
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeConfig } from '../../src/config.js';
import { createMemfold } from '../../src/memfold.js';
import { defaultMigrationsDir, listMigrations, runMigrations } from '../../src/persistence/kysely/kysely-migrations.js';
import { openKyselyStore } from '../../src/persistence/kysely/kysely-store.js';
import { createPgliteDialect } from '../../src/persistence/pglite/pglite-dialect.js';
import { createPostgresDialect } from '../../src/persistence/postgres/postgres-dialect.js';
import { copyPgliteTemplate, createPostgresTestDatabase, persistenceBackends, postgresServerUrl } from '../support/backends.js';

/** A database with nothing of memfold in it, the settings that open memfold on it, and raw SQL on it in `public`. */
interface BlankDatabase {
  config: Partial<RuntimeConfig>;
  /** Run `fn` on the database with `search_path` = public (on PGlite only while no memfold holds it open). */
  raw<T>(fn: (db: Kysely<any>) => Promise<T>): Promise<T>;
  /** For openKyselyStore. */
  store: { dialect: 'pglite'; dataDir: string } | { dialect: 'postgres'; databaseUrl: string };
  cleanup(): Promise<void>;
}

async function blankPglite(): Promise<BlankDatabase> {
  const { root, dataDir } = await copyPgliteTemplate();
  // The template is migrated: the first use takes memfold out again, for a database as an application would have it.
  let blanked = false;
  const raw = async <T>(fn: (db: Kysely<any>) => Promise<T>): Promise<T> => {
    const dialect = await createPgliteDialect(dataDir, { schema: 'public' });
    const db = new Kysely<any>({ dialect: dialect.dialect });
    try {
      if (!blanked) await sql`drop schema memfold cascade`.execute(db);
      blanked = true;
      return await fn(db);
    } finally {
      await db.destroy();
      await dialect.close();
    }
  };
  return { config: { home: root }, raw, store: { dialect: 'pglite', dataDir }, cleanup: () => rm(root, { recursive: true, force: true }) };
}

async function blankPostgres(): Promise<BlankDatabase> {
  const database = await createPostgresTestDatabase(postgresServerUrl()!);
  const home = await mkdtemp(path.join(os.tmpdir(), 'memfold-schema-'));
  return {
    config: { home, databaseUrl: database.url },
    async raw(fn) {
      const dialect = await createPostgresDialect(database.url, { schema: 'public' });
      const db = new Kysely<any>({ dialect: dialect.dialect });
      try {
        return await fn(db);
      } finally {
        await db.destroy();
      }
    },
    store: { dialect: 'postgres', databaseUrl: database.url },
    async cleanup() {
      await database.drop();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** The tables of `schema`, sorted. */
async function tablesOf(db: Kysely<any>, schema: string): Promise<string[]> {
  const rows = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = ${schema} order by 1`.execute(db);
  return rows.rows.map((row) => row.name);
}

const MEMFOLD_TABLES = [
  'archive_binding',
  'compaction_operations',
  'compaction_pauses',
  'conversation_settings',
  'conversations',
  'memfold_migrations',
  'memfold_rate_slots',
  'message_ids',
  'messages',
  'token_calibrations',
];

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

for (const backend of persistenceBackends()) {
  const blank = async () => {
    const database = await (backend.name === 'pglite' ? blankPglite() : blankPostgres());
    cleanups.push(database.cleanup);
    return database;
  };

  describe(`${backend.name}: memfold's own schema`, () => {
    it('opens on an application database with its own conversations and messages in public, works, and leaves them untouched', async () => {
      const database = await blank();
      const appSchema = `
        create table public.conversations (id serial primary key, title text not null);
        create table public.messages (id serial primary key, conversation_id int references public.conversations (id), body text);
        insert into public.conversations (title) values ('support'), ('sales');
        insert into public.messages (conversation_id, body) values (1, 'hello'), (2, 'quote');`;
      const appRows = (db: Kysely<any>) =>
        Promise.all([
          sql`select * from public.conversations order by id`.execute(db),
          sql`select * from public.messages order by id`.execute(db),
          sql`select table_name, column_name, data_type from information_schema.columns where table_schema = 'public' order by 1, 2`.execute(db),
        ]).then((results) => results.map((result) => result.rows));
      const before = await database.raw(async (db) => {
        await sql.raw(appSchema).execute(db);
        return appRows(db);
      });

      const memfold = await createMemfold({ config: database.config, env: {} });
      await memfold.append('c', [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'second' },
      ]);
      expect((await memfold.history('c')).map((m) => m.content)).toEqual(['first', 'second']);
      await memfold.close();

      await database.raw(async (db) => {
        expect(await appRows(db)).toEqual(before);
        expect(await tablesOf(db, 'public')).toEqual(['conversations', 'messages']);
        expect(await tablesOf(db, 'memfold')).toEqual(MEMFOLD_TABLES);
      });
    });

    it('moves a store made before memfold had its own schema (migrated to 010 in public) with every message, and nothing of the application', async () => {
      const database = await blank();
      // The store as an earlier version left it: migrations 001-010 applied in public, 60 messages in two conversations.
      const oldDir = await mkdtemp(path.join(os.tmpdir(), 'memfold-old-migrations-'));
      cleanups.push(() => rm(oldDir, { recursive: true, force: true }));
      for (const name of (await listMigrations()).filter((name) => name < '011')) {
        await copyFile(path.join(defaultMigrationsDir(), name), path.join(oldDir, name));
      }
      await database.raw(async (db) => {
        expect((await runMigrations(db, { dir: oldDir, schema: 'public' })).current).toHaveLength(10);
        await sql
          .raw(`
          insert into conversations (namespace, id, created_at, updated_at, next_seq) values ('default', 'a', now(), now(), 41), ('default', 'b', now(), now(), 21);
          insert into messages (namespace, conversation_id, id, seq, role, content, created_at)
            select 'default', 'a', 'a' || n, n, 'user', jsonb_build_object('text', 'a message ' || n), now() from generate_series(1, 40) n
            union all select 'default', 'b', 'b' || n, n, 'user', jsonb_build_object('text', 'b message ' || n), now() from generate_series(1, 20) n;
          insert into message_ids (namespace, conversation_id, id) select namespace, conversation_id, id from messages;
          create table public.app_notes (id int primary key, note text);
          insert into public.app_notes values (1, 'the application''s own');`)
          .execute(db);
      });
      // A reader that may not migrate is told where the tables are and what moves them.
      await expect(openKyselyStore({ ...database.store, migrate: false })).rejects.toThrow(/schema "public".*memfold migrate.*move them/);

      const memfold = await createMemfold({ config: database.config, env: {} });
      try {
        const a = await memfold.history('a');
        expect(a.map((m) => m.content)).toEqual(Array.from({ length: 40 }, (_, i) => `a message ${i + 1}`));
        expect((await memfold.history('b')).map((m) => m.id)).toEqual(Array.from({ length: 20 }, (_, i) => `b${i + 1}`));
        // The moved id ledger still refuses an id the old store accepted; seqs go on where they were.
        await expect(memfold.append('a', [{ id: 'a3', role: 'user', content: 'again' }])).rejects.toMatchObject({ field: 'messages[0].id' });
        expect((await memfold.append('a', [{ role: 'user', content: 'new' }]))[0]!.seq).toBe(41);
      } finally {
        await memfold.close();
      }
      await database.raw(async (db) => {
        expect(await tablesOf(db, 'public')).toEqual(['app_notes']);
        expect(await tablesOf(db, 'memfold')).toEqual(MEMFOLD_TABLES);
        expect((await sql`select * from public.app_notes`.execute(db)).rows).toEqual([{ id: 1, note: "the application's own" }]);
        const recorded = await sql<{ name: string }>`select name from memfold.memfold_migrations order by name`.execute(db);
        expect(recorded.rows.map((row) => row.name)).toEqual(await listMigrations());
      });
    });

    it('a failing migration leaves nothing behind; the error is short and names the schema and the setting', async () => {
      const database = await blank();
      // The configured schema already holds the application's own `messages`: memfold's 001 cannot create its table.
      await database.raw((db) =>
        sql.raw(`create schema app; create table app.messages (id int primary key); insert into app.messages values (7);`).execute(db),
      );

      const error = await createMemfold({ config: { ...database.config, databaseSchema: 'app' }, env: {} }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'persistence_error', details: { schema: 'app', migration: '001_init.sql', sqlstate: '42P07' } });
      const message = (error as Error).message;
      expect(message).toMatch(
        /schema "app" \(MEMFOLD_DATABASE_SCHEMA\) failed at migration 001_init\.sql: relation "messages" already exists; nothing was applied/,
      );
      expect(message).toMatch(/set MEMFOLD_DATABASE_SCHEMA \(config\.databaseSchema\) to a schema of memfold's own/);
      // What an uncaught rejection prints: the message and one stack, not the driver's error with its dozen fields.
      expect(inspect(error).split('\n').length).toBeLessThan(25);

      await database.raw(async (db) => {
        expect(await tablesOf(db, 'app')).toEqual(['messages']);
        expect((await sql`select * from app.messages`.execute(db)).rows).toEqual([{ id: 7 }]);
        expect(await tablesOf(db, 'public')).toEqual([]);
        expect((await sql`select nspname from pg_namespace where nspname = 'memfold'`.execute(db)).rows).toEqual([]);
      });
      // The default schema still opens on that database.
      const memfold = await createMemfold({ config: database.config, env: {} });
      await memfold.close();
    });
  });
}

describe('the schema setting', () => {
  it('is refused before anything opens unless a plain lowercase identifier apart from pg-boss', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'memfold-schema-setting-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    for (const bad of ['Memfold', 'my-schema', 'pg_memfold', 'a"b', 'memfold_jobs']) {
      await expect(createMemfold({ config: { home }, env: { MEMFOLD_DATABASE_SCHEMA: bad } })).rejects.toMatchObject({
        code: 'invalid_config',
        field: 'MEMFOLD_DATABASE_SCHEMA',
      });
      await expect(createMemfold({ config: { home, databaseSchema: bad }, env: {} })).rejects.toMatchObject({ field: 'config.databaseSchema' });
    }
    expect(await readdir(home)).toEqual([]);
  });
});
