import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // LanceDB and PGlite are native/wasm heavy: forks isolate them per file.
    pool: 'forks',
    env: { LANCEDB_LOG: 'error' },
  },
});
