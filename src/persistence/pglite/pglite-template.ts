/**
 * The migrated PGlite data directory memfold ships (`dist/pglite-template.tar.gz`, made by `npm run build`), and
 * whether it may seed a new one. PGlite's `initdb` in WebAssembly takes seconds and most of a GiB; a new data
 * directory instead starts as a copy of this one, then gets whatever migrations came after it.
 *
 * The manifest beside it (`dist/pglite-template.json`) says what it holds. It is used only when all of it still
 * holds: the same PGlite version (the catalog's format is PGlite's), the schema asked for, and migrations that are a
 * prefix of the package's, each file's text unchanged. Otherwise the directory is made by `initdb`, as without one.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultMigrationsDir, listMigrations } from '../kysely/kysely-migrations.js';

export const TEMPLATE_TARBALL = 'pglite-template.tar.gz';
export const TEMPLATE_MANIFEST = 'pglite-template.json';

export interface TemplateMigration {
  name: string;
  /** SHA-256 of the file's text, hex. */
  sha256: string;
}

export interface TemplateManifest {
  pgliteVersion: string;
  /** The schema its migrations were applied in. */
  schema: string;
  migrations: TemplateMigration[];
  /** `pg_control_system().system_identifier` of the template: every data directory seeded from it has the same. */
  systemIdentifier: string;
}

export interface TemplateSource {
  /** The folder holding the tarball and its manifest. Default: the package's `dist/`. */
  dir?: string;
  /** The migrations the template must be a prefix of. Default: the package's `migrations/`. */
  migrationsDir?: string;
}

/** The package's `dist/` folder, where the build writes the template. */
export function defaultTemplateDir(): string {
  return path.join(path.dirname(defaultMigrationsDir()), 'dist');
}

/** The version of the PGlite this process loads, read from its package.json (which its exports map does not expose). */
export function installedPgliteVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (json.name === '@electric-sql/pglite' && json.version) return json.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the package.json of @electric-sql/pglite');
    dir = parent;
  }
}

/** The migrations of `dir` in the order they apply, with their texts' hashes. */
export async function migrationDigests(dir: string = defaultMigrationsDir()): Promise<TemplateMigration[]> {
  const names = await listMigrations(dir);
  return Promise.all(
    names.map(async (name) => ({
      name,
      sha256: createHash('sha256')
        .update(await readFile(path.join(dir, name)))
        .digest('hex'),
    })),
  );
}

/** Why `manifest` may not seed a data directory for `schema` given the current migrations, or undefined when it may. */
export function templateMismatch(
  manifest: TemplateManifest,
  current: { pgliteVersion: string; schema: string; migrations: readonly TemplateMigration[] },
): string | undefined {
  if (manifest.pgliteVersion !== current.pgliteVersion) return `made by PGlite ${manifest.pgliteVersion}, this is ${current.pgliteVersion}`;
  if (manifest.schema !== current.schema) return `migrated in schema ${manifest.schema}, not ${current.schema}`;
  if (manifest.migrations.length > current.migrations.length) return 'holds migrations the package does not have';
  const changed = manifest.migrations.find((m, i) => m.name !== current.migrations[i]!.name || m.sha256 !== current.migrations[i]!.sha256);
  return changed ? `its migration ${changed.name} is not the package's` : undefined;
}

/** Whether a fitting template holds every current migration (a build keeps only such a one). */
export function holdsEveryMigration(manifest: TemplateManifest, migrations: readonly TemplateMigration[]): boolean {
  return (
    manifest.migrations.length === migrations.length &&
    templateMismatch(manifest, { pgliteVersion: manifest.pgliteVersion, schema: manifest.schema, migrations }) === undefined
  );
}

/**
 * The template's tarball path and manifest when it may seed a new data directory for `schema`; undefined when there
 * is none or it does not fit (then the directory is made by `initdb`). Never throws: an unreadable template is none.
 */
export async function usableTemplate(schema: string, source: TemplateSource = {}): Promise<{ tarball: string; manifest: TemplateManifest } | undefined> {
  try {
    const dir = source.dir ?? defaultTemplateDir();
    const tarball = path.join(dir, TEMPLATE_TARBALL);
    if (!existsSync(tarball)) return undefined;
    const manifest = JSON.parse(await readFile(path.join(dir, TEMPLATE_MANIFEST), 'utf8')) as TemplateManifest;
    const current = { pgliteVersion: installedPgliteVersion(), schema, migrations: await migrationDigests(source.migrationsDir) };
    return templateMismatch(manifest, current) === undefined ? { tarball, manifest } : undefined;
  } catch {
    return undefined;
  }
}
