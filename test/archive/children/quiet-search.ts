/**
 * Child of library-quiet.integration.test.ts: a whole memfold session through the public API (append, compaction,
 * memory_read search with full text and vectors), with LANCEDB_LOG unset. Prints the answer's size.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createMemfold } from '../../../src/memfold.js';

const home = await mkdtemp(path.join(os.tmpdir(), 'memfold-quiet-'));
try {
  const memfold = await createMemfold({ env: { MEMFOLD_HOME: home }, compaction: { contextWindow: 2_000 } });
  const turns = Array.from({ length: 120 }, (_, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `Turn ${i}: the heron at pier ${i % 7} caught ${i} fish before the ferry left.`,
  }));
  await memfold.append('c', turns);
  const compacted = await memfold.compact('c');
  const answer = await memfold.memoryRead('c').execute({ query: 'heron pier ferry' });
  await memfold.close();
  process.stdout.write(`${JSON.stringify({ status: compacted.status, ok: answer.ok, chars: answer.output.length, env: process.env.LANCEDB_LOG ?? null })}\n`);
} finally {
  await rm(home, { recursive: true, force: true });
}
