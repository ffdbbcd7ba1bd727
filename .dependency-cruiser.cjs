/**
 * The layout's rules, checked on the import graph of src/ by `npm run lint` (dependency-cruiser) and by
 * test/structure.test.ts, which reads them from here: this file is their one source of truth.
 *
 * TypeScript 7 has no compiler API yet, so sources are parsed with swc; `import type` edges count too.
 */

/** Adapters: a backend's code and its client packages, which only the composition root and the CLI wire in. */
const ADAPTERS = [
  '^src/archive/(lancedb|in-memory)/',
  '^src/persistence/(kysely|pglite|postgres|in-memory)/',
  '^src/openai/',
  '^src/summarizer/extractive/',
  '^src/(configured-adapters|on-demand-adapters)\\.ts$',
  // resolved under node_modules/, or left as the bare name when its exports map does not resolve
  '(^|^node_modules/|/node_modules/)(pg|pg-boss|kysely|openai|@lancedb/lancedb|@electric-sql/pglite)(/|$)',
];

/** The orchestrator: the compaction root's files that sequence the stages. */
const ORCHESTRATOR =
  '^src/compaction/(compactor|compactor-context|compactor-steps|compact-history|prepare-compaction|hook-calls|fold-beside-archive|run-compaction|run-tiers|compaction-hooks)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module imports itself back through others (type imports count: a cycle of types is a tangle too).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'compaction-no-adapter',
      comment: 'compaction/ talks to its ports only, never to an adapter or a backend package.',
      severity: 'error',
      from: { path: '^src/compaction/' },
      to: { path: ADAPTERS },
    },
    {
      name: 'compaction-ports-as-types',
      comment:
        'compaction/ imports its ports (archive, persistence, summarizer, embedding) as types only; the one exception is the archive port\'s pure digest rule (entry-digest.ts), which both sides of a read-back must compute alike.',
      severity: 'error',
      from: { path: '^src/compaction/' },
      to: { path: '^src/(archive|persistence|summarizer|embedding)/', pathNot: '^src/archive/entry-digest\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'stages-not-orchestrator',
      comment: "A compaction sub-folder (a stage) never imports the orchestrator that calls it.",
      severity: 'error',
      from: { path: '^src/compaction/[^/]+/' },
      to: { path: ORCHESTRATOR },
    },
    {
      name: 'lower-layers-not-compaction',
      comment: 'conversation/ and tokens/ are below compaction: they never import it.',
      severity: 'error',
      from: { path: '^src/(conversation|tokens)/' },
      to: { path: '^src/compaction/' },
    },
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
  },
};
