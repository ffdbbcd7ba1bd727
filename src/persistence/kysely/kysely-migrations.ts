/**
 * The migration runner: plain SQL files in `migrations/`, applied in name order in one transaction and recorded in
 * `memfold_migrations`, all in memfold's own schema. Re-running applies nothing.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { errorMessage, MemfoldError } from '../../errors.js';
import { DEFAULT_DATABASE_SCHEMA } from '../database-schema.js';
import { ConnectionLostError, toPersistenceError } from '../persistence-error.js';
import type { MigrationReport } from '../persistence-provider.js';

/** Files the runner applies: `NNN_name.sql`. */
const MIGRATION_FILE = /^\d{3,}_[A-Za-z0-9_-]+\.sql$/;

/**
 * Serializes concurrent runners (several processes opening one PostgreSQL database at once, earlier versions
 * included): every migration transaction first takes this transaction-scoped advisory lock.
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

/** The migration that moves a store made before it out of `public`; applied first to such a store. */
export const OWN_SCHEMA_MIGRATION = '011_own_schema.sql';

/**
 * Apply the pending migrations of `dir` (default: the package's `migrations/`) to `db`, whose connections resolve
 * names in `schema` (default `memfold`; the dialects set `search_path`). One transaction: the schema, the record and
 * every migration commit together, and a failure leaves the database as it was (PostgreSQL's DDL is transactional).
 * A store whose record is still in `public` (made before 011) gets 011 first, which moves its tables here.
 */
export async function runMigrations(db: Kysely<any>, options: { dir?: string; schema?: string } = {}): Promise<MigrationReport> {
  const dir = options.dir ?? defaultMigrationsDir();
  const schema = options.schema ?? DEFAULT_DATABASE_SCHEMA;
  const names = await listMigrations(dir);
  const texts = new Map(await Promise.all(names.map(async (name) => [name, await readFile(path.join(dir, name), 'utf8')] as const)));
  let step = 'the start';
  try {
    return await db.transaction().execute(async (trx) => {
      await lockMigrations(trx);
      step = 'creating the schema';
      const found = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(trx);
      // Created only when missing: CREATE SCHEMA IF NOT EXISTS would still ask for CREATE on the database.
      if (found.rows.length === 0) await sql`create schema ${sql.id(schema)}`.execute(trx);
      const applied: string[] = [];
      const ownRecord = await recordTable(trx, schema);
      const moving = schema !== 'public' && !ownRecord && (await recordTable(trx, 'public')) && texts.has(OWN_SCHEMA_MIGRATION);
      if (moving) {
        step = `migration ${OWN_SCHEMA_MIGRATION}`;
        await applyText(trx, texts.get(OWN_SCHEMA_MIGRATION)!);
      }
      step = 'creating the memfold_migrations record';
      await sql`create table if not exists memfold_migrations (
        name text primary key,
        applied_at timestamptz not null default now()
      )`.execute(trx);
      if (moving) {
        // Recorded already when that store once ran with schema "public" (011 then had nothing to move).
        await sql`insert into memfold_migrations (name) values (${OWN_SCHEMA_MIGRATION}) on conflict do nothing`.execute(trx);
        applied.push(OWN_SCHEMA_MIGRATION);
      }
      for (const name of names) {
        const done = await sql`select 1 from memfold_migrations where name = ${name}`.execute(trx);
        if (done.rows.length > 0) continue;
        step = `migration ${name}`;
        await applyText(trx, texts.get(name)!);
        await sql`insert into memfold_migrations (name) values (${name})`.execute(trx);
        applied.push(name);
      }
      const rows = await sql<{ name: string }>`select name from memfold_migrations order by name`.execute(trx);
      return { applied, current: rows.rows.map((row) => row.name) };
    });
  } catch (error) {
    throw migrationError(error, step, schema);
  }
}

/** No parameters: pg sends the text as a simple query, so a file may hold many statements. */
function applyText(trx: Kysely<any>, text: string): Promise<unknown> {
  return sql.raw(text).execute(trx);
}

/** Whether `schema` holds a `memfold_migrations` table. */
async function recordTable(db: Kysely<any>, schema: string): Promise<boolean> {
  const name = `"${schema}".memfold_migrations`;
  const result = await sql<{ found: string | null }>`select to_regclass(${name})::text as found`.execute(db);
  return result.rows[0]?.found != null;
}

/**
 * A failed run as one short persistence error (the driver's error, with its dozen fields, is not kept as the cause):
 * what failed, in which schema, the SQLSTATE, that nothing was applied, and what to change.
 */
function migrationError(error: unknown, step: string, schema: string): MemfoldError {
  // A lost connection is wrapped like any driver failure: the error names the migration it cut off.
  if (MemfoldError.isInstance(error) && !ConnectionLostError.isInstance(error)) return error;
  const code = ConnectionLostError.isInstance(error)
    ? error.sqlCode
    : typeof error === 'object' && error !== null
      ? (error as { code?: unknown }).code
      : undefined;
  const sqlstate = typeof code === 'string' ? code : undefined;
  const advice =
    sqlstate === '42P07'
      ? ` The schema already holds a table of that name that memfold did not create: set MEMFOLD_DATABASE_SCHEMA (config.databaseSchema) to a schema of memfold's own.`
      : sqlstate === '42501'
        ? ` The database user lacks the privilege: grant it CREATE on the database, or create schema "${schema}" owned by it, or set MEMFOLD_DATABASE_SCHEMA (config.databaseSchema) to a schema it owns.`
        : '';
  const migration = step.startsWith('migration ') ? step.slice('migration '.length) : undefined;
  return new MemfoldError(
    'persistence_error',
    `Migrating memfold's tables in schema "${schema}" (MEMFOLD_DATABASE_SCHEMA) failed at ${step}: ${errorMessage(error)}; ` +
      `nothing was applied (the run is one transaction).${advice}`,
    // A lost connection or a deadlock may pass on a retry; the driver's classification says which.
    { retryable: toPersistenceError(error, step).retryable, details: { schema, ...(migration ? { migration } : {}), ...(sqlstate ? { sqlstate } : {}) } },
  );
}

/**
 * Check, without writing anything, that every migration of `dir` is recorded in `memfold_migrations` of `schema`.
 * Throws MemfoldError('persistence_error') saying the database is not initialized (or that its tables are still in
 * `public`), or how many migrations it is behind by, and that `memfold migrate` applies them.
 */
export async function requireMigrated(db: Kysely<any>, options: { dir?: string; schema?: string } = {}): Promise<void> {
  const expected = await listMigrations(options.dir ?? defaultMigrationsDir());
  const schema = options.schema ?? DEFAULT_DATABASE_SCHEMA;
  // to_regclass answers null for a missing table instead of failing (no error, no aborted transaction).
  if (!(await recordTable(db, schema))) {
    const inPublic = schema !== 'public' && (await recordTable(db, 'public'));
    throw new MemfoldError(
      'persistence_error',
      inPublic
        ? `memfold's tables are in schema "public" (made by an earlier version), not in schema "${schema}" (MEMFOLD_DATABASE_SCHEMA): run \`memfold migrate\` (or open the store with migrate: true) to move them`
        : `The database is not initialized for memfold (no memfold_migrations table in schema "${schema}"): run \`memfold migrate\` (or open the store with migrate: true)`,
      { details: { pending: expected, schema } },
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
