/**
 * The build keeps a shipped PGlite template only when it holds every migration: one made before a new migration still
 * seeds a home (the new one applies on top), but `npm run build` must make it again, or the package ships it stale.
 */
import { describe, expect, it } from 'vitest';
import { holdsEveryMigration, type TemplateManifest } from '../../src/persistence/pglite/pglite-template.js';

const migrations = [
  { name: '001_init.sql', sha256: 'a' },
  { name: '002_next.sql', sha256: 'b' },
];
const manifest = (list: TemplateManifest['migrations']): TemplateManifest => ({
  pgliteVersion: '0.5.16',
  schema: 'memfold',
  migrations: list,
  systemIdentifier: '1',
});

describe('holdsEveryMigration', () => {
  it('is true for a template of exactly the current migrations', () => {
    expect(holdsEveryMigration(manifest(migrations), migrations)).toBe(true);
  });
  it('is false for a template made before the newest migration, or of a changed one', () => {
    expect(holdsEveryMigration(manifest(migrations.slice(0, 1)), migrations)).toBe(false);
    expect(holdsEveryMigration(manifest([migrations[0]!, { name: '002_next.sql', sha256: 'changed' }]), migrations)).toBe(false);
  });
});
