/**
 * `npm run build`'s last step (`node dist/src/persistence/pglite/pglite-template-build.js [dir]`): the migrated PGlite
 * data directory memfold ships, `pglite-template.tar.gz` (PGlite's own `dumpDataDir`) and its manifest, in the
 * package's `dist/` or `dir`. Kept when the manifest still fits (same PGlite, same migrations), so a rebuild that
 * changed neither does not pay `initdb` again.
 */
import { mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_DATABASE_SCHEMA } from '../database-schema.js';
import { runMigrations } from '../kysely/kysely-migrations.js';
import { createPgliteDialect } from './pglite-dialect.js';
import { LOCK_FILE_NAME } from './pglite-lock-file.js';
import {
  defaultTemplateDir,
  installedPgliteVersion,
  migrationDigests,
  TEMPLATE_MANIFEST,
  TEMPLATE_TARBALL,
  usableTemplate,
  type TemplateManifest,
} from './pglite-template.js';

/** initdb and every migration in `dataDir`, as a first open did before there was a template. */
async function migratedByInitdb(dataDir: string): Promise<void> {
  const { Kysely } = await import('kysely');
  const backend = await createPgliteDialect(dataDir, { template: false });
  const db = new Kysely<unknown>({ dialect: backend.dialect });
  try {
    await runMigrations(db);
  } finally {
    await db.destroy();
    await backend.close();
  }
}

/** Make (or keep) the template in `dir`; says which it did. */
export async function buildPgliteTemplate(dir: string = defaultTemplateDir()): Promise<'kept' | 'built'> {
  if (await usableTemplate(DEFAULT_DATABASE_SCHEMA, { dir })) return 'kept';
  await rm(path.join(dir, TEMPLATE_MANIFEST), { force: true });
  const work = await mkdtemp(path.join(os.tmpdir(), 'memfold-pglite-template-'));
  try {
    const dataDir = path.join(work, 'pg');
    await migratedByInitdb(dataDir);
    for (const name of await readdir(dataDir)) if (name.startsWith(LOCK_FILE_NAME)) await rm(path.join(dataDir, name));
    const { PGlite } = await import('@electric-sql/pglite');
    const pglite = await PGlite.create(dataDir);
    let tarball: Blob;
    let systemIdentifier: string;
    try {
      await pglite.exec('checkpoint');
      const { rows } = await pglite.query<{ id: string }>('select system_identifier::text as id from pg_control_system()');
      systemIdentifier = rows[0]!.id;
      tarball = await pglite.dumpDataDir('gzip');
    } finally {
      await pglite.close();
    }
    const manifest: TemplateManifest = {
      pgliteVersion: installedPgliteVersion(),
      schema: DEFAULT_DATABASE_SCHEMA,
      migrations: await migrationDigests(),
      systemIdentifier,
    };
    // The tarball first, the manifest last: a tarball without its manifest is never used.
    const staged = path.join(dir, `${TEMPLATE_TARBALL}.${process.pid}.tmp`);
    await writeFile(staged, new Uint8Array(await tarball.arrayBuffer()));
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
