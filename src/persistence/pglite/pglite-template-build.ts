/**
 * `npm run build`'s last step (`node dist/src/persistence/pglite/pglite-template-build.js [dir]`): the migrated PGlite
 * data directory memfold ships, `pglite-template.tar.gz` (made by initdb and the migrations, closed, archived) and
 * its manifest, in the package's `dist/` or `dir`. Kept when the manifest still fits (same PGlite, same migrations),
 * so a rebuild that changed neither does not pay `initdb` again.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_DATABASE_SCHEMA } from '../database-schema.js';
import { runMigrations } from '../kysely/kysely-migrations.js';
import { createPgliteDialect } from './pglite-dialect.js';
import { tarDirectory } from './pglite-template-tar.js';
import {
  defaultTemplateDir,
  holdsEveryMigration,
  installedPgliteVersion,
  migrationDigests,
  TEMPLATE_MANIFEST,
  TEMPLATE_TARBALL,
  usableTemplate,
  type TemplateManifest,
} from './pglite-template.js';

/** initdb and every migration in `dataDir`, as a first open did before there was a template; the cluster's system identifier. */
async function migratedByInitdb(dataDir: string): Promise<string> {
  const { Kysely, sql } = await import('kysely');
  const backend = await createPgliteDialect(dataDir, { template: false });
  const db = new Kysely<unknown>({ dialect: backend.dialect });
  try {
    await runMigrations(db);
    const { rows } = await sql<{ id: string }>`select system_identifier::text as id from pg_control_system()`.execute(db);
    return rows[0]!.id;
  } finally {
    await db.destroy();
    await backend.close();
  }
}

/** Make (or keep) the template in `dir`; says which it did. */
export async function buildPgliteTemplate(dir: string = defaultTemplateDir()): Promise<'kept' | 'built'> {
  // Kept only when it holds every migration: a template missing the newest ones still seeds a home (they apply on
  // top), but the package ships one that needs none.
  const usable = await usableTemplate(DEFAULT_DATABASE_SCHEMA, { dir });
  if (usable && holdsEveryMigration(usable.manifest, await migrationDigests())) return 'kept';
  await rm(path.join(dir, TEMPLATE_MANIFEST), { force: true });
  const work = await mkdtemp(path.join(os.tmpdir(), 'memfold-pglite-template-'));
  try {
    const dataDir = path.join(work, 'pg');
    const systemIdentifier = await migratedByInitdb(dataDir);
    const tarball = await tarDirectory(dataDir);
    const manifest: TemplateManifest = {
      pgliteVersion: installedPgliteVersion(),
      schema: DEFAULT_DATABASE_SCHEMA,
      migrations: await migrationDigests(),
      systemIdentifier,
    };
    // The tarball first, the manifest last: a tarball without its manifest is never used.
    const staged = path.join(dir, `${TEMPLATE_TARBALL}.${process.pid}.tmp`);
    await writeFile(staged, tarball);
    await rename(staged, path.join(dir, TEMPLATE_TARBALL));
    await writeFile(path.join(dir, TEMPLATE_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    return 'built';
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = performance.now();
  buildPgliteTemplate(process.argv[2])
    .then((done) => console.log(`PGlite template ${done === 'kept' ? 'up to date' : `built in ${((performance.now() - started) / 1000).toFixed(1)} s`}`))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
