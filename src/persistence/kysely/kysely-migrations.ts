/**
 * The migration runner: plain SQL files in `migrations/`, applied in name order, each in its own
 * transaction and recorded in `memfold_migrations`. Re-running applies nothing.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { MemfoldError } from '../../errors.js';
import type { MigrationReport } from '../persistence-provider.js';

/** Files the runner applies: `NNN_name.sql`. */
const MIGRATION_FILE = /^\d{3,}_[A-Za-z0-9_-]+\.sql$/;

/**
 * Serializes concurrent runners (several processes opening one PostgreSQL database at once):
 * every migration transaction first takes this transaction-scoped advisory lock.
 */
const MIGRATION_LOCK_KEY = '7311240811940281597';

/**
 * The package's `migrations/` folder. Walks up from this file to the folder holding package.json,
 * so it resolves the same from `src/persistence` (tsx) and `dist/src/persistence` (tsc output).
 */
export function defaultMigrationsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'migrations');
    const parent = path.dirname(dir);
    if (parent === dir) throw new MemfoldError('persistence_error', 'Cannot find the memfold package root (package.json) above ' + import.meta.url);
    dir = parent;
  }
}

/** The migration file names in `dir`, in the order they apply. */
export async function listMigrations(dir: string = defaultMigrationsDir()): Promise<string[]> {
  const names = await readdir(dir);
  return names.filter((name) => MIGRATION_FILE.test(name)).sort();
}

/**
 * Apply the pending migrations of `dir` (default: the package's `migrations/`) to `db`.
 * A failing migration rolls back alone and throws; the ones before it stay recorded.
 */
export async function runMigrations(db: Kysely<any>, options: { dir?: string } = {}): Promise<MigrationReport> {
  const dir = options.dir ?? defaultMigrationsDir();
  await db.transaction().execute(async (trx) => {
    await lockMigrations(trx);
    await sql`create table if not exists memfold_migrations (
      name text primary key,
      applied_at timestamptz not null default now()
    )`.execute(trx);
  });
  const applied: string[] = [];
  for (const name of await listMigrations(dir)) {
    const text = await readFile(path.join(dir, name), 'utf8');
    await db.transaction().execute(async (trx) => {
      await lockMigrations(trx);
      const done = await sql`select 1 from memfold_migrations where name = ${name}`.execute(trx);
      if (done.rows.length > 0) return;
      try {
        // No parameters: pg sends it as a simple query, so a file may hold many statements.
        await sql.raw(text).execute(trx);
      } catch (error) {
        throw new MemfoldError('persistence_error', `Migration ${name} failed: ${(error as Error).message}`, {
          cause: error,
          details: { migration: name },
        });
      }
      await sql`insert into memfold_migrations (name) values (${name})`.execute(trx);
      applied.push(name);
    });
  }
  const rows = await sql<{ name: string }>`select name from memfold_migrations order by name`.execute(db);
  return { applied, current: rows.rows.map((row) => row.name) };
}

/**
 * Check, without writing anything, that every migration of `dir` is recorded in `memfold_migrations`.
 * Throws MemfoldError('persistence_error') saying the database is not initialized, or how many
 * migrations it is behind by, and that `memfold migrate` applies them.
 */
export async function requireMigrated(db: Kysely<any>, options: { dir?: string } = {}): Promise<void> {
  const expected = await listMigrations(options.dir ?? defaultMigrationsDir());
  // to_regclass answers null for a missing table instead of failing (no error, no aborted transaction).
  const table = await sql<{ found: string | null }>`select to_regclass('memfold_migrations')::text as found`.execute(db);
  if (table.rows[0]?.found == null) {
    throw new MemfoldError(
      'persistence_error',
      'The database is not initialized for memfold (no memfold_migrations table): run `memfold migrate` (or open the store with migrate: true)',
      { details: { pending: expected } },
    );
  }
  const rows = await sql<{ name: string }>`select name from memfold_migrations`.execute(db);
  const recorded = new Set(rows.rows.map((row) => row.name));
  const pending = expected.filter((name) => !recorded.has(name));
  if (pending.length > 0) {
    throw new MemfoldError(
      'persistence_error',
      `The database is behind by ${pending.length} migration${pending.length === 1 ? '' : 's'} (${pending.join(', ')}): run \`memfold migrate\` (or open the store with migrate: true)`,
      { details: { pending } },
    );
  }
}

function lockMigrations(trx: Kysely<any>): Promise<unknown> {
  return sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}::bigint)`.execute(trx);
}
