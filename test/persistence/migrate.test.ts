import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultMigrationsDir, listMigrations, runMigrations } from '../../src/persistence/kysely/kysely-migrations.js';
import { createPgliteDialect } from '../../src/persistence/pglite/pglite-dialect.js';
import { createPostgresDialect } from '../../src/persistence/postgres/postgres-dialect.js';
import type { StoreDialect } from '../../src/persistence/kysely/store-dialect.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { copyPgliteTemplate, createPostgresTestDatabase, persistenceBackends } from '../support/backends.js';

describe('migration files', () => {
  it('resolves the package migrations folder and lists NNN_*.sql files in order', async () => {
    expect(defaultMigrationsDir()).toBe(path.resolve(import.meta.dirname, '../../migrations'));
    const names = await listMigrations();
    expect(names[0]).toBe('001_init.sql');
    expect(names).toEqual([...names].sort());
  });
});

for (const backend of persistenceBackends()) {
  describe(`${backend.name}: migrations`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    it('has applied every migration file on open; a second migrate applies nothing', async () => {
      const files = await listMigrations();
      expect(await store.migrate()).toEqual({ applied: [], current: files });
      expect(await store.migrate()).toEqual({ applied: [], current: files });
    });
  });

  describe(`${backend.name}: upgrading a store to the id ledger (003)`, () => {
    it('records the ids of live messages and of messages committed operations archived, so neither can be appended again', async () => {
      const opened = await backend.open({ namespace: 'ns' });
      try {
        const { persistence: store, exec } = opened;
        // A store as it was before 003: live rows and a committed operation, no ledger.
        await exec(`drop table message_ids; delete from memfold_migrations where name = '003_message_ids.sql'`);
        await exec(`insert into conversations (namespace, id, created_at, updated_at, next_seq) values ('ns', 'c', now(), now(), 4)`);
        await exec(`insert into messages (namespace, conversation_id, id, seq, role, content, created_at)
                    values ('ns', 'c', 'live', 3, 'user', '{"text":"still here"}', now())`);
        await exec(`insert into compaction_operations (id, namespace, conversation_id, status, message_ids, created_at, updated_at)
                    values ('op1', 'ns', 'c', 'committed', '["old1","old2"]', now(), now()),
                           ('op2', 'ns', 'c', 'rolled_back', '["undone"]', now(), now())`);
        expect((await store.migrate()).applied).toEqual(['003_message_ids.sql']);

        expect((await store.findUsedIds('c', ['live', 'old1', 'old2', 'undone'])).map((u) => u.id).sort()).toEqual(['live', 'old1', 'old2']);
        for (const id of ['live', 'old2']) {
          await expect(store.append('c', [{ id, role: 'user', content: 'reuse' }])).rejects.toMatchObject({ field: 'messages[0].id' });
        }
        // A rolled-back operation archived nothing: its ids are not taken by it.
        expect((await store.append('c', [{ id: 'undone', role: 'user', content: 'fresh' }])).map((m) => m.seq)).toEqual([4]);
      } finally {
        await opened.cleanup();
      }
    });
  });

  describe(`${backend.name}: upgrading a store to overlay mode (007)`, () => {
    it('keeps every row live and reads earlier operations as delete-mode ones', async () => {
      const opened = await backend.open({ namespace: 'ns' });
      try {
        const { persistence: store, exec } = opened;
        // A store as it was before 007: a live row and a committed operation.
        await exec(`drop index messages_live_idx; drop index messages_compacted_by_idx;
                    alter table messages drop column compacted_by; alter table compaction_operations drop column mode;
                    delete from memfold_migrations where name = '007_overlay.sql'`);
        await exec(`insert into conversations (namespace, id, created_at, updated_at, next_seq) values ('ns', 'c', now(), now(), 3)`);
        await exec(`insert into messages (namespace, conversation_id, id, seq, role, content, created_at)
                    values ('ns', 'c', 'live', 2, 'user', '{"text":"still here"}', now())`);
        await exec(`insert into compaction_operations (id, namespace, conversation_id, status, message_ids, created_at, updated_at)
                    values ('op1', 'ns', 'c', 'committed', '["old"]', now(), now())`);
        expect((await store.migrate()).applied).toEqual(['007_overlay.sql']);

        expect(await store.listOperations('c')).toMatchObject([{ id: 'op1', status: 'committed', mode: 'delete' }]);
        expect(await store.loadHistory('c')).toMatchObject([{ id: 'live', seq: 2 }]);
        expect((await store.loadHistory('c'))[0]!.compactedBy).toBeUndefined();
      } finally {
        await opened.cleanup();
      }
    });
  });

  describe(`${backend.name}: the migration runner`, () => {
    let db: Kysely<any>;
    let dialect: StoreDialect;
    let dispose: () => Promise<void>;
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-migrations-'));
      if (backend.name === 'pglite') {
        const copy = await copyPgliteTemplate();
        dialect = await createPgliteDialect(copy.dataDir);
        dispose = () => rm(copy.root, { recursive: true, force: true });
      } else {
        const database = await createPostgresTestDatabase(process.env.DATABASE_URL!);
        dialect = await createPostgresDialect(database.url);
        dispose = database.drop;
      }
      db = new Kysely({ dialect: dialect.dialect });
    });
    afterAll(async () => {
      await db.destroy();
      await dialect.close();
      await dispose();
      await rm(dir, { recursive: true, force: true });
    });

    it('applies files in name order in one transaction: a failing one leaves nothing of the run, and a fixed run applies them all', async () => {
      // 010 depends on 002, which depends on 001: applying out of order would fail.
      await writeFile(path.join(dir, '001_alpha.sql'), 'create table t_alpha (id int primary key);');
      await writeFile(path.join(dir, '002_beta.sql'), 'create table t_beta (id int references t_alpha (id)); insert into t_alpha values (1);');
      await writeFile(path.join(dir, '010_gamma.sql'), 'insert into t_beta values (1); create table t_gamma (x int); select no_such_function();');
      await writeFile(path.join(dir, 'notes.txt'), 'not a migration');
      const recordedBefore = await recordedNames();

      const failure = await runMigrations(db, { dir }).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'persistence_error', details: { migration: '010_gamma.sql', schema: 'memfold', sqlstate: '42883' } });
      expect((failure as Error).message).toMatch(
        /schema "memfold" \(MEMFOLD_DATABASE_SCHEMA\) failed at migration 010_gamma\.sql: .*no_such_function.*nothing was applied/,
      );
      // Nothing of the run is left: not the files before the failing one, nor their tables, nor a record made by it.
      expect(await recordedNames()).toEqual(recordedBefore);
      for (const table of ['t_alpha', 't_beta', 't_gamma']) {
        expect((await sql<{ t: string | null }>`select to_regclass(${table})::text as t`.execute(db)).rows[0]!.t).toBeNull();
      }

      await writeFile(path.join(dir, '010_gamma.sql'), 'insert into t_beta values (1); create table t_gamma (x int);');
      const report = await runMigrations(db, { dir });
      expect(report.applied).toEqual(['001_alpha.sql', '002_beta.sql', '010_gamma.sql']);
      expect(report.current).toEqual(expect.arrayContaining(['001_alpha.sql', '002_beta.sql', '010_gamma.sql']));
      expect((await runMigrations(db, { dir })).applied).toEqual([]);
      expect((await sql`select * from t_beta`.execute(db)).rows).toEqual([{ id: 1 }]);
    });

    /** The migrations recorded in memfold's schema, or null when it has no record (a new database). */
    async function recordedNames(): Promise<string[] | null> {
      const table = await sql<{ t: string | null }>`select to_regclass('memfold.memfold_migrations')::text as t`.execute(db);
      if (table.rows[0]!.t === null) return null;
      return (await sql<{ name: string }>`select name from memfold.memfold_migrations order by name`.execute(db)).rows.map((r) => r.name);
    }

    it('records the real migrations with their application time', async () => {
      const report = await runMigrations(db);
      expect(report.current).toEqual(expect.arrayContaining(await listMigrations()));
      const rows = await sql<{ name: string; applied_at: Date }>`select name, applied_at from memfold_migrations where name = '001_init.sql'`.execute(db);
      expect(rows.rows).toHaveLength(1);
      expect(rows.rows[0]!.applied_at).toBeInstanceOf(Date);
    });
  });
}
