/**
 * Vitest global setup: builds ONE migrated PGlite data directory (initdb costs seconds) and
 * provides its path as `pgliteTemplateDir`; tests copy it (see backends.ts) instead of initializing.
 * With the package built (`dist/pglite-template.tar.gz`), this open itself is seeded from the shipped
 * template rather than running initdb; the copy stays, since copying a folder is faster than unpacking.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A closed, migrated PGlite data directory. Copy it; never open it in place. */
    pgliteTemplateDir: string;
  }
}

let root: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  root = await mkdtemp(path.join(os.tmpdir(), 'memfold-pglite-template-'));
  const dir = path.join(root, 'pg');
  const store = await createKyselyPersistence({ dialect: 'pglite', dataDir: dir });
  await store.close();
  project.provide('pgliteTemplateDir', dir);
}

export async function teardown(): Promise<void> {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
}
