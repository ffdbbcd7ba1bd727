import { afterEach, describe, expect, it, vi } from 'vitest';
import { persistenceBackends, storeBackends } from '../support/backends.js';

describe('persistenceBackends()', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('requires DATABASE_URL in CI, so PostgreSQL tests never skip there', () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv('DATABASE_URL', '');
    vi.stubEnv('MEMFOLD_TEST_BACKENDS', '');
    expect(() => persistenceBackends()).toThrow(/DATABASE_URL is required in CI/);
  });

  it('offers pglite alone outside CI without DATABASE_URL, and both with it', () => {
    vi.stubEnv('CI', '');
    vi.stubEnv('MEMFOLD_TEST_BACKENDS', '');
    vi.stubEnv('DATABASE_URL', '');
    expect(persistenceBackends().map((b) => b.name)).toEqual(['pglite']);
    vi.stubEnv('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/test');
    expect(persistenceBackends().map((b) => b.name)).toEqual(['pglite', 'postgres']);
  });

  it('filters by MEMFOLD_TEST_BACKENDS and rejects unknown or unavailable names', () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/test');
    vi.stubEnv('MEMFOLD_TEST_BACKENDS', 'postgres');
    expect(persistenceBackends().map((b) => b.name)).toEqual(['postgres']);
    vi.stubEnv('MEMFOLD_TEST_BACKENDS', ' pglite , postgres');
    expect(persistenceBackends().map((b) => b.name)).toEqual(['pglite', 'postgres']);
    vi.stubEnv('MEMFOLD_TEST_BACKENDS', 'sqlite');
    expect(() => persistenceBackends()).toThrow(/unknown backend "sqlite"/);
    vi.stubEnv('CI', '');
    vi.stubEnv('DATABASE_URL', '');
    vi.stubEnv('MEMFOLD_TEST_BACKENDS', 'postgres');
    expect(() => persistenceBackends()).toThrow(/DATABASE_URL is not set/);
  });

  it('adds the in-memory store to the contract suites, and MEMFOLD_TEST_BACKENDS=memory keeps it alone', () => {
    vi.stubEnv('CI', '');
    vi.stubEnv('DATABASE_URL', '');
    vi.stubEnv('MEMFOLD_TEST_BACKENDS', '');
    expect(storeBackends().map((b) => [b.name, b.sql])).toEqual([
      ['pglite', true],
      ['memory', false],
    ]);
    vi.stubEnv('MEMFOLD_TEST_BACKENDS', 'memory');
    expect(storeBackends().map((b) => b.name)).toEqual(['memory']);
    expect(persistenceBackends()).toEqual([]);
  });
});
