/**
 * Shared by the conversation management suites: SQL stores with their Kysely handle (to scan every table), a
 * conversation whose every message carries a marker word, and scans of the database and of the LanceDB folder.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { NewMessage } from '../../src/conversation/types.js';
import { openKyselyStore } from '../../src/persistence/kysely/kysely-store.js';
import type { Database } from '../../src/persistence/kysely/kysely-schema.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { copyPgliteTemplate, createPostgresTestDatabase, persistenceBackends, type DatabaseBackendName } from '../support/backends.js';

export interface SqlStore {
  persistence: PersistenceProvider;
  db: Kysely<Database>;
  cleanup(): Promise<void>;
}

/** The database backends to run on (PGlite, and PostgreSQL when DATABASE_URL is set; required under CI=true). */
export function sqlBackendNames(): DatabaseBackendName[] {
  return persistenceBackends().map((backend) => backend.name);
}

/** A fresh migrated store of that backend, with its Kysely handle. */
export async function openSqlStore(name: DatabaseBackendName): Promise<SqlStore> {
  if (name === 'pglite') {
    const { root, dataDir } = await copyPgliteTemplate();
    const { persistence, db } = await openKyselyStore({ dialect: 'pglite', dataDir });
    return { persistence, db, cleanup: async () => (await persistence.close(), await rm(root, { recursive: true, force: true })) };
  }
  const database = await createPostgresTestDatabase(process.env.DATABASE_URL!);
  const { persistence, db } = await openKyselyStore({ dialect: 'postgres', databaseUrl: database.url });
  return { persistence, db, cleanup: async () => (await persistence.close(), await database.drop()) };
}

/** A word no other text contains: `<prefix><hex>`, letters and digits only, so tokenizers keep it whole. */
export function uniqueWord(prefix: string): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/**
 * `turns` tool-using turns, every message carrying `marker` and its own number: a question, a tool call, a long tool
 * output (so tier 2 clears outputs), an answer; a minute apart from `from` on.
 */
export function markedTurns(marker: string, turns: number, from = 0): NewMessage[] {
  return Array.from({ length: turns }, (_, i) => {
    const n = from + i;
    const at = (k: number) => new Date(Date.UTC(2024, 6, 1, 8, 4 * n + k)).toISOString();
    return [
      { role: 'user' as const, content: `question ${n} about ${marker} shipment ${n}: where is crate ${n}?`, createdAt: at(0) },
      {
        role: 'assistant' as const,
        content: `looking up ${marker} crate ${n}`,
        toolCalls: [{ id: `call_${n}`, type: 'function' as const, function: { name: 'lookup', arguments: `{"crate":"${marker}-${n}"}` } }],
        createdAt: at(1),
      },
      { role: 'tool' as const, toolCallId: `call_${n}`, content: `${marker} crate ${n}: ${'dock bay pallet row '.repeat(60)}`, createdAt: at(2) },
      { role: 'assistant' as const, content: `crate ${n} of ${marker} is at dock ${n % 7} ${'with the usual paperwork '.repeat(6)}`, createdAt: at(3) },
    ];
  }).flat();
}

/** `table.column` for every text-like column of the current schema whose text contains one of `needles`. */
export async function tablesContaining(db: Kysely<Database>, needles: readonly string[]): Promise<string[]> {
  const columns = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema() and data_type in ('text', 'jsonb', 'json', 'character varying', 'character')`.execute(db);
  const found: string[] = [];
  for (const { table_name: table, column_name: column } of columns.rows) {
    for (const needle of needles) {
      const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const hits = await sql<{ n: string | number }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)}::text like ${pattern}`.execute(db);
      if (Number(hits.rows[0]?.n ?? 0) > 0) found.push(`${table}.${column} ~ ${needle}`);
    }
  }
  return found;
}

/** Every file under `dir` whose bytes contain one of `needles`, as `relative path ~ needle`. */
export async function filesContaining(dir: string, needles: readonly string[]): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const found: string[] = [];
  for (const entry of entries.filter((e) => e.isFile())) {
    const file = path.join(entry.parentPath, entry.name);
    const bytes = await readFile(file);
    for (const needle of needles) if (bytes.includes(Buffer.from(needle))) found.push(`${path.relative(dir, file)} ~ ${needle}`);
  }
  return found;
}
