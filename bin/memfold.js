#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so the command works right after `npm install` with no build step.
// `run` ends the process itself once the command is done and its output flushed.
import { register } from 'tsx/esm/api';

process.env.LANCEDB_LOG ??= 'error';
register();
const { run } = await import('../src/cli/bin.ts');
await run(process.argv.slice(2));
