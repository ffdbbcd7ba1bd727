/**
 * Child of lancedb-s3.integration.test.ts: one writer process. Opens memfold with the environment it was given
 * (a PGlite home of its own, LANCEDB_URI on the shared S3 bucket), appends the order chat to the conversation
 * named by argv[2] in rounds, compacting after each, and prints the messages it appended as JSON. It prints `opened` once
 * memfold is open and waits for a line on standard input before writing.
 */
import { createMemfold } from '../../../src/memfold.js';
import { orderChat } from '../../support/messages.js';

const conversationId = process.argv[2]!;
const rounds = Number(process.argv[3] ?? 3);
const memfold = await createMemfold({ compaction: { contextWindow: 2_000 } });
// Opened (its store probe done); the writing starts when the parent says so, at once for every writer.
process.stdout.write('opened\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const appended = [];
const statuses = [];
for (let round = 0; round < rounds; round++) {
  appended.push(...(await memfold.append(conversationId, orderChat(24, round * 24))));
  const result = await memfold.compact(conversationId);
  statuses.push(result.status === 'failed' ? `failed: ${result.failureCode} ${result.error}` : result.status);
}
await memfold.close();
process.stdout.write(`${JSON.stringify({ appended, statuses })}\n`);
