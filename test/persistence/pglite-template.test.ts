/**
 * A new PGlite data directory starts from the migrated template the build ships (`dist/pglite-template.tar.gz`), not
 * from `initdb`. The evidence is the cluster's system identifier: `initdb` draws a new one, so a directory that has
 * the template's was seeded from it. Migrations newer than the template apply on top; a template that does not fit
 * (another PGlite, schema or set of migrations) is not used.
 */
import { cp, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { defaultMigrationsDir, runMigrations } from '../../src/persistence/kysely/kysely-migrations.js';
import { openKyselyStore } from '../../src/persistence/kysely/kysely-store.js';
import { createPgliteDialect, PGLITE_SHARED_BUFFERS } from '../../src/persistence/pglite/pglite-dialect.js';
import { seedDataDir } from '../../src/persistence/pglite/pglite-seed.js';
import { TarReader } from '../../src/persistence/pglite/pglite-tar-reader.js';
import {
  defaultTemplateDir,
  installedPgliteVersion,
  migrationDigests,
  TEMPLATE_MANIFEST,
  templateMismatch,
  usableTemplate,
  type TemplateManifest,
} from '../../src/persistence/pglite/pglite-template.js';
import { fileCleanups } from '../support/cleanups.js';

const cleanups = fileCleanups();

async function shippedManifest(): Promise<TemplateManifest> {
  // `npm run build` (run before the integration tests) makes it; without it memfold's first open runs initdb.
  return JSON.parse(await readFile(path.join(defaultTemplateDir(), TEMPLATE_MANIFEST), 'utf8')) as TemplateManifest;
}

async function systemIdentifier<T>(db: Kysely<T>): Promise<string> {
  const { rows } = await sql<{ id: string }>`select system_identifier::text as id from pg_control_system()`.execute(db);
  return rows[0]!.id;
}

describe('the shipped PGlite template', () => {
  it('fits the package: this PGlite, schema memfold, every migration of migrations/', async () => {
    const manifest = await shippedManifest();
    const current = { pgliteVersion: installedPgliteVersion(), schema: 'memfold', migrations: await migrationDigests() };
    expect(templateMismatch(manifest, current)).toBeUndefined();
    expect(manifest.migrations.map((m) => m.name)).toEqual((await readdir(defaultMigrationsDir())).filter((n) => n.endsWith('.sql')).sort());
  });

  it('seeds the first open of an empty data directory (no initdb: the cluster is the template), migrated', async () => {
    const manifest = await shippedManifest();
    const dataDir = path.join(await cleanups.tempDir('memfold-template-'), 'pg');
    const { persistence, db } = await openKyselyStore({ dialect: 'pglite', dataDir });
    try {
      expect(await systemIdentifier(db)).toBe(manifest.systemIdentifier);
      // The buffer pool PGlite touches whole at start: PostgreSQL's 128MB default was a third of an open's memory.
      expect((await sql<{ shared_buffers: string }>`show shared_buffers`.execute(db)).rows[0]!.shared_buffers).toBe(PGLITE_SHARED_BUFFERS);
      expect((await persistence.migrate()).applied).toEqual([]);
      await persistence.append('c1', [{ role: 'user', content: 'hello' }]);
      expect((await persistence.loadHistory('c1')).map((m) => m.content)).toEqual(['hello']);
    } finally {
      await persistence.close();
    }
    expect(await readdir(dataDir)).not.toContain('memfold-seeding');
  });

  it('applies a migration newer than the template on top of it', async () => {
    const manifest = await shippedManifest();
    const root = await cleanups.tempDir('memfold-template-');
    const migrationsDir = path.join(root, 'migrations');
    await cp(defaultMigrationsDir(), migrationsDir, { recursive: true });
    await writeFile(path.join(migrationsDir, '999_probe.sql'), 'create table probe (id int primary key);\n');
    const backend = await createPgliteDialect(path.join(root, 'pg'), { template: { migrationsDir } });
    const db = new Kysely<unknown>({ dialect: backend.dialect });
    try {
      expect(await systemIdentifier(db)).toBe(manifest.systemIdentifier);
      expect((await runMigrations(db, { dir: migrationsDir })).applied).toEqual(['999_probe.sql']);
      await sql`insert into probe (id) values (1)`.execute(db);
    } finally {
      await db.destroy();
      await backend.close();
    }
  });
});

describe('when the template is not used', () => {
  const fits = { pgliteVersion: '0.5.16', schema: 'memfold', migrations: [{ name: '001_a.sql', sha256: 'aa' }] };

  it('another PGlite, another schema, a changed or unknown migration: refused, saying why', () => {
    const current = { ...fits, migrations: [...fits.migrations, { name: '002_b.sql', sha256: 'bb' }] };
    expect(templateMismatch({ ...fits, systemIdentifier: '1' }, current)).toBeUndefined();
    expect(templateMismatch({ ...fits, pgliteVersion: '0.4.0', systemIdentifier: '1' }, current)).toMatch(/PGlite 0\.4\.0/);
    expect(templateMismatch({ ...fits, schema: 'other', systemIdentifier: '1' }, current)).toMatch(/schema other/);
    const changed = { ...fits, migrations: [{ name: '001_a.sql', sha256: 'changed' }], systemIdentifier: '1' };
    expect(templateMismatch(changed, current)).toMatch(/001_a\.sql/);
    expect(templateMismatch({ ...current, systemIdentifier: '1' }, fits)).toMatch(/does not have/);
  });

  it('a folder without a template, or a schema other than the template was migrated in: no seed', async () => {
    expect(await usableTemplate('memfold', { dir: await cleanups.tempDir('memfold-no-template-') })).toBeUndefined();
    const dataDir = await cleanups.tempDir('memfold-template-');
    expect(await seedDataDir(dataDir, 'other_schema')).toBe(false);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('a directory holding files of its own is left to PGlite as it is', async () => {
    const dataDir = await cleanups.tempDir('memfold-template-');
    await writeFile(path.join(dataDir, 'notes.txt'), 'mine');
    expect(await seedDataDir(dataDir, 'memfold')).toBe(false);
    expect(await readdir(dataDir)).toEqual(['notes.txt']);
  });

  it('a seeding cut short (its marker left) is cleared and seeded again', async () => {
    const dataDir = await cleanups.tempDir('memfold-template-');
    await mkdir(path.join(dataDir, 'base'));
    await writeFile(path.join(dataDir, 'base', 'half-written'), 'x');
    await writeFile(path.join(dataDir, 'memfold-seeding'), '');
    expect(await seedDataDir(dataDir, 'memfold')).toBe(true);
    const names = await readdir(dataDir);
    expect(names).toContain('PG_VERSION');
    expect(names).not.toContain('memfold-seeding');
    expect(await readdir(path.join(dataDir, 'base'))).not.toContain('half-written');
  });

  it('a template that cannot be unpacked is none: what was written is removed, for initdb', async () => {
    const templates = await cleanups.tempDir('memfold-bad-template-');
    await cp(path.join(defaultTemplateDir(), TEMPLATE_MANIFEST), path.join(templates, TEMPLATE_MANIFEST));
    const good = await readFile(path.join(defaultTemplateDir(), 'pglite-template.tar.gz'));
    // The first half of the archive: some files unpack, then the gzip stream ends early.
    await writeFile(path.join(templates, 'pglite-template.tar.gz'), good.subarray(0, good.length >> 1));
    const dataDir = await cleanups.tempDir('memfold-template-');
    expect(await seedDataDir(dataDir, 'memfold', { dir: templates })).toBe(false);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('a tar entry leaving the directory is refused', () => {
    const header = new Uint8Array(1024);
    header.set(new TextEncoder().encode('../escape'), 0);
    header.set(new TextEncoder().encode('00000000000\0'), 124);
    header[156] = '0'.charCodeAt(0);
    expect(() => new TarReader().push(header)).toThrow(/bad tar entry/);
  });
});
