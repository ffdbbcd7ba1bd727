import { defineConfig } from 'vitest/config';

/**
 * Tests that need a database, LanceDB, child processes or an HTTP server. Everything else is a unit test:
 * `npm run test:unit` runs those alone, with no database and no global PGlite setup. A new test of that
 * kind is named `*.integration.test.ts` (or `*.e2e.test.ts`), or listed here.
 */
const INTEGRATION = [
  'test/**/*.integration.test.ts',
  'test/**/*.e2e.test.ts',
  'test/persistence/**/*.test.ts',
  'test/durability/**/*.test.ts',
  'test/cli/{import,messages,scoping}.test.ts',
  'test/compaction/{compact-history-input,properties,replay-datasets}.test.ts',
  'test/embedding/embedding-unavailable.test.ts',
  'test/eval/eval-{cli,runner}.test.ts',
  'test/memfold-open.test.ts',
  'test/archive/archive-*.test.ts',
  'test/archive/lancedb-archive-*.test.ts',
  'test/archive/lancedb-writes.test.ts',
  'test/summarizer/with-fallback.test.ts',
  'test/openai/openai-{circuit-breaker,compaction,embedder,queue,summarizer}.test.ts',
  'test/tools/memory-read-{hostile,search}.test.ts',
];
const EXCLUDE = ['test/bench/**', 'node_modules/**'];

// Only settings that are not arrays live at the root: projects inherit them (`extends: true`), and
// array settings such as globalSetup would be appended to every project's.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // LanceDB and PGlite are native/wasm heavy: forks isolate them per file.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...EXCLUDE, ...INTEGRATION] },
      },
      {
        extends: true,
        test: { name: 'integration', include: INTEGRATION, exclude: EXCLUDE, globalSetup: ['test/support/global-setup.ts'] },
      },
    ],
  },
});
