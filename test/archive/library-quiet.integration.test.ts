/**
 * The library is quiet: a session of appends, a compaction and memory_read searches (full text and
 * vectors) writes nothing on stderr, without LANCEDB_LOG set, and leaves process.env as it was.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('a library session', () => {
  it('writes nothing on stderr and sets no environment variable', () => {
    const env = { ...process.env };
    delete env.LANCEDB_LOG;
    const child = spawnSync(process.execPath, ['--import', 'tsx', new URL('./children/quiet-search.ts', import.meta.url).pathname], {
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout.trim().split('\n').pop()!)).toMatchObject({ status: 'compacted', ok: true, env: null });
    expect(child.stderr).toBe('');
  }, 150_000);
});
