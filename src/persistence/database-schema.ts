/** The PostgreSQL schema that holds memfold's tables, apart from an application's own tables in `public`. */
import { InvalidArgumentError } from '../errors.js';

/** Default schema of memfold's tables. */
export const DEFAULT_DATABASE_SCHEMA = 'memfold';

/** What a schema name must be; unquoted lowercase, so it reads the same in SQL, in `search_path` and in messages. */
export const DATABASE_SCHEMA_RULE =
  'must be a lowercase SQL identifier (a letter or "_", then letters, digits or "_"; at most 63 characters), not pg_* or information_schema';

/** Why `value` cannot be a schema name, or undefined when it can. */
export function databaseSchemaProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(value) || value.startsWith('pg_') || value === 'information_schema') {
    return `${DATABASE_SCHEMA_RULE} (got ${JSON.stringify(value)})`;
  }
  return undefined;
}

/** `value` as a schema name, or InvalidArgumentError naming `field`. */
export function requireDatabaseSchema(value: unknown, field: string): string {
  const problem = databaseSchemaProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(field, problem);
  return value as string;
}

/** `set search_path` to the schema alone: an unqualified name never reaches an application's table in `public`. */
export function searchPathStatement(schema: string): string {
  return `set search_path to "${schema}"`;
}
