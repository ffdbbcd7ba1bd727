import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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
// The benchmarks (`test/bench/*.ts`) are no test files; their smoke run is one (`test/bench/bench-smoke.integration.test.ts`).
const EXCLUDE = ['node_modules/**'];

/**
 * The files that take longest, longest first. They start first, so that the two workers finish together instead
 * of one of them starting the five-minute crash test when the other has nothing left to run (in CI there is no
 * cache of past durations; without this, vitest orders by file size).
 */
const SLOW_FIRST = [
  'test/durability/crash-recovery.test.ts',
  'test/cli/cli.e2e.test.ts',
  'test/cli/import.test.ts',
  'test/compaction/recovery.integration.test.ts',
  'test/compaction/compactor.integration.test.ts',
  'test/cli/scoping.test.ts',
  'test/archive/lancedb-s3.integration.test.ts',
  'test/compaction/properties.test.ts',
  'test/durability/concurrency.test.ts',
  'test/durability/id-reuse.properties.test.ts',
  'test/memfold-open.test.ts',
  'test/compaction/replay-datasets.test.ts',
];

/**
 * The tests' temporary folders (PGlite copies of a thousand files, LanceDB tables, homes) go to a folder of this run
 * on /dev/shm when it is a memory file system with room to spare: copying the PGlite template takes a tenth of the
 * time it takes on disk. Set in this process before the workers fork, so they and the children they start inherit it
 * (`os.tmpdir()` reads TMPDIR); removed when the run exits. MEMFOLD_TEST_TMPDIR names another parent folder; an empty
 * value keeps the system's.
 */
function scratchRoot(): string | undefined {
  const wanted = process.env.MEMFOLD_TEST_TMPDIR;
  if (wanted === '') return undefined;
  const parent = wanted ?? '/dev/shm';
  try {
    if (wanted === undefined) {
      const fs = statfsSync(parent);
      // tmpfs, with at least 4 GiB free: the suite's folders take a few hundred MB at a time.
      if (fs.type !== 0x01021994 || fs.bavail * fs.bsize < 4 * 1024 ** 3) return undefined;
    }
    return mkdtempSync(path.join(parent, 'memfold-test-'));
  } catch {
    return undefined;
  }
}
const scratch = process.env.VITEST_WORKER_ID === undefined ? scratchRoot() : undefined;
if (scratch !== undefined) {
  process.env.TMPDIR = scratch;
  process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
}

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = SLOW_FIRST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return index === -1 ? SLOW_FIRST.length : index;
    };
    // Array.prototype.sort is stable: the rest keep the order vitest gave them.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

// Only settings that are not arrays live at the root: projects inherit them (`extends: true`), and
// array settings such as globalSetup would be appended to every project's.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // LanceDB and PGlite are native/wasm heavy: forks isolate them per file.
    pool: 'forks',
    // Vitest's default for a run is one worker less than the CPUs: one on a 2-core machine, so every file ran
    // alone. Most files wait on child processes, PostgreSQL or LanceDB I/O; two workers keep two cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: SlowFirstSequencer },
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
