/**
 * Opening a home that already has its archive does not open the archive: appends, context and usage never load
 * LanceDB (checked on the compiled package in a fresh `node` whose module hook lists the packages loaded). The
 * archive opens on its first call, after checking that it is the live store's: another archive put in the recorded
 * folder is refused there, with `archive_mismatch`, before anything is written to it.
 */
import { execFile } from 'node:child_process';
import { cp, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemfold } from '../../src/memfold.js';
import { copyPgliteTemplate } from '../support/backends.js';

const exec = promisify(execFile);
const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const ENTRY = pathToFileURL(path.join(ROOT, 'dist/src/index.js')).href;

let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** A PGlite home opened once (its archive made and recorded) with one message appended. */
async function usedHome(): Promise<string> {
  const { root } = await copyPgliteTemplate();
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const memfold = await createMemfold({ config: { home: root }, env: {} });
  await memfold.append('c', [{ role: 'user', content: 'first' }]);
  await memfold.close();
  return root;
}

const messages = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i} ${'words '.repeat(20)}` }) as const);

describe('createMemfold on a home with its archive', () => {
  it('appends, builds context and reads usage without loading LanceDB', async () => {
    const home = await usedHome();
    const script = `
import { registerHooks } from 'node:module';
const loaded = new Set();
registerHooks({ load(url, context, next) { const name = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url)?.[1]; if (name) loaded.add(name); return next(url, context); } });
const { createMemfold } = await import(${JSON.stringify(ENTRY)});
const m = await createMemfold({ config: { home: ${JSON.stringify(home)} }, env: {} });
await m.append('c', [{ role: 'user', content: 'second' }]);
const context = (await m.context('c')).map((message) => message.content);
await m.usage('c');
await m.close();
console.log(JSON.stringify({ loaded: [...loaded].sort(), context }));
`;
    const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' } });
    const { loaded, context } = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(context).toEqual(['first', 'second']);
    expect(loaded).toContain('@electric-sql/pglite');
    expect(loaded).not.toContain('@lancedb/lancedb');
  });

  it('refuses another archive put in the recorded folder on its first archive call, writing nothing to it', async () => {
    const [home, other] = [await usedHome(), await usedHome()];
    const lancedb = path.join(home, 'lancedb');
    await rm(lancedb, { recursive: true });
    await cp(path.join(other, 'lancedb'), lancedb, { recursive: true });
    const before = await readdir(lancedb, { recursive: true });

    const memfold = await createMemfold({ config: { home }, env: {}, compaction: { contextWindow: 2_000 } });
    cleanups.push(() => memfold.close());
    await memfold.append('c', messages);
    const result = await memfold.compact('c', { force: true });
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('the same location, but it is another archive') });
    expect(await readdir(lancedb, { recursive: true })).toEqual(before);
  });
});
