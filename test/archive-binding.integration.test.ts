/**
 * One live store has one archive: the first open records the archive (its location and the id it keeps inside
 * itself) in the live store, and an open that brings another archive is refused, naming both locations and
 * LANCEDB_URI, before it reads or writes either. The same archive through another path is the same archive; a
 * moved one is adopted on request. Another archive put in the recorded folder is refused on the first archive call. PGlite homes (the archive inside the home) are unaffected, moved or not.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rename, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveRuntimeConfig, type RuntimeConfig } from '../src/config.js';
import { openArchiveBackend } from '../src/mcp/mcp-backends.js';
import { createMemfold, type Memfold } from '../src/memfold.js';
import { copyPgliteTemplate, createPostgresTestDatabase, postgresServerUrl } from './support/backends.js';
import { runCli } from './support/run-cli.js';

const serverUrl = postgresServerUrl();

let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-binding-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function open(config: Partial<RuntimeConfig>, options: { adoptArchive?: boolean } = {}): Promise<Memfold> {
  const memfold = await createMemfold({ config, env: {}, ...options });
  cleanups.push(() => memfold.close());
  return memfold;
}

describe.skipIf(serverUrl === undefined)('one PostgreSQL live store, one archive', () => {
  async function database(): Promise<string> {
    const created = await createPostgresTestDatabase(serverUrl!);
    cleanups.push(created.drop);
    return created.url;
  }

  it('refuses a second process with another archive folder, naming both and LANCEDB_URI; the same folder opens', async () => {
    const databaseUrl = await database();
    const [here, there] = [await tempDir(), await tempDir()];
    const first = await open({ databaseUrl, home: here });
    await first.append('c', [{ role: 'user', content: 'hello' }]);

    const refused = await createMemfold({ config: { databaseUrl, home: there }, env: {} }).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: 'archive_mismatch',
      details: { recordedLocation: path.join(here, 'lancedb'), location: path.join(there, 'lancedb'), setting: 'LANCEDB_URI' },
    });
    const message = (refused as Error).message;
    expect(message).toContain(path.join(here, 'lancedb'));
    expect(message).toContain(path.join(there, 'lancedb'));
    expect(message).toMatch(/LANCEDB_URI/);
    expect(message).toMatch(/--adopt-archive/);
    // Refused before it wrote anything: no archive folder was made for it.
    expect(existsSync(path.join(there, 'lancedb'))).toBe(false);

    // The same archive, from another working folder (a relative LANCEDB_URI resolved to the same place) and through a
    // symlink (another mount of it): both open beside the first and see its messages.
    const same = await open({ databaseUrl, home: there, lancedbUri: path.relative(process.cwd(), path.join(here, 'lancedb')) });
    expect((await same.history('c')).map((m) => m.content)).toEqual(['hello']);
    const link = path.join(there, 'mounted');
    await symlink(path.join(here, 'lancedb'), link);
    const linked = await open({ databaseUrl, home: there, lancedbUri: link });
    expect((await linked.history('c')).map((m) => m.content)).toEqual(['hello']);
  });

  it('processes opening a new store with one new archive at once all open: they bind one after the other', async () => {
    const databaseUrl = await database();
    const home = await tempDir();
    const opened = await Promise.all(Array.from({ length: 4 }, () => open({ databaseUrl, home })));
    await opened[0]!.append('c', [{ role: 'user', content: 'one' }]);
    for (const memfold of opened) expect((await memfold.history('c')).map((m) => m.content)).toEqual(['one']);
    await open({ databaseUrl, home });
  });

  it('refuses another archive at the recorded path; adopting it is the way out, and the old one is then refused', async () => {
    const databaseUrl = await database();
    const home = await tempDir();
    const lancedb = path.join(home, 'lancedb');
    await (await open({ databaseUrl, home })).close();
    // The folder replaced by another one (an emptied disk, a new mount): the same path, not the same archive.
    await rename(lancedb, path.join(home, 'old-lancedb'));
    await mkdir(lancedb);
    await expect(createMemfold({ config: { databaseUrl, home }, env: {} })).rejects.toMatchObject({
      code: 'archive_mismatch',
      message: expect.stringContaining('the same location, but it is an archive without its identity'),
    });

    await (await open({ databaseUrl, home }, { adoptArchive: true })).close();
    await (await open({ databaseUrl, home })).close();
    await expect(createMemfold({ config: { databaseUrl, home, lancedbUri: path.join(home, 'old-lancedb') }, env: {} })).rejects.toMatchObject({
      code: 'archive_mismatch',
    });
  });

  it('another archive put in the recorded folder opens, and is refused on its first archive call, before any write', async () => {
    const databaseUrl = await database();
    const [home, other] = [await tempDir(), await tempDir()];
    await (await open({ databaseUrl, home })).close();
    await (await createMemfold({ config: { home: other }, env: {} })).close(); // another archive, with its own identity
    const lancedb = path.join(home, 'lancedb');
    await rm(lancedb, { recursive: true });
    await cp(path.join(other, 'lancedb'), lancedb, { recursive: true });
    const before = await readdir(lancedb, { recursive: true });

    const memfold = await createMemfold({ config: { databaseUrl, home }, env: {}, compaction: { contextWindow: 2_000 } });
    cleanups.push(() => memfold.close());
    await memfold.append(
      'c',
      Array.from({ length: 40 }, (_, i) => ({ role: 'user' as const, content: `message ${i} ${'words '.repeat(20)}` })),
    );
    expect(await memfold.compact('c', { force: true })).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('the same location, but it is another archive'),
    });
    expect(await readdir(lancedb, { recursive: true })).toEqual(before);
  });

  it('the CLI is refused the same way, a read command and a read-only MCP server included; reconcile --adopt-archive adopts', async () => {
    const databaseUrl = await database();
    const [here, there] = [await tempDir(), await tempDir()];
    await (await open({ databaseUrl, home: here })).close();
    const env = { MEMFOLD_DATABASE_URL: databaseUrl };
    for (const args of [['list'], ['migrate']]) {
      const result = await runCli([...args, '--home', there], { env });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`is at ${path.join(here, 'lancedb')}`);
      expect(result.stderr).toContain(path.join(there, 'lancedb'));
    }
    // `mcp --read-only` opens the archive alone, after checking it against the live store's record.
    const readOnly = (home: string) => openArchiveBackend(resolveRuntimeConfig({ home, databaseUrl }, {}));
    await expect(readOnly(there)).rejects.toMatchObject({ code: 'archive_mismatch' });
    await (await readOnly(here)).close();

    expect((await runCli(['reconcile', '--adopt-archive', '--home', there], { env })).code).toBe(0);
    expect((await runCli(['list', '--home', there], { env })).code).toBe(0);
    expect((await runCli(['list', '--home', here], { env })).code).toBe(1);
  });
});

describe('a PGlite home', () => {
  it('opens again, and still opens after the whole home moved', async () => {
    const { root } = await copyPgliteTemplate();
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const first = await createMemfold({ config: { home: root }, env: {} });
    await first.append('c', [{ role: 'user', content: 'kept' }]);
    await first.close();
    const moved = `${root}-moved`;
    await rename(root, moved);
    cleanups.push(() => rm(moved, { recursive: true, force: true }));
    const again = await open({ home: moved });
    expect((await again.history('c')).map((m) => m.content)).toEqual(['kept']);
  });
});
