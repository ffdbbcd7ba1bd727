#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so the command works right after `npm install` with no build step.
import { register } from 'tsx/esm/api';

process.env.LANCEDB_LOG ??= 'error';
register();
const { run } = await import('../src/cli/bin.ts');
await run(process.argv.slice(2));
