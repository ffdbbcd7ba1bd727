#!/usr/bin/env node
// Runs the compiled library (`dist/`, built by `npm run build`, which `npm install` runs as `prepare`).
// `run` ends the process itself once the command is done and its output flushed.

// The command, unlike the library, may set its own environment: LanceDB logs errors only. LanceDB reads
// it when it loads, which is later (the library loads it when a store opens).
process.env.LANCEDB_LOG ??= 'error';
const { run } = await import('../dist/src/cli/bin.js');
await run(process.argv.slice(2));
