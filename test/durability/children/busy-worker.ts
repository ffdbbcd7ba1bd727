/**
 * Child process of the concurrency test: `workers` async workers append random turns to random
 * conversations and compact them, until the deadline, on a shared PostgreSQL database and LanceDB
 * folder. Writes every message it appended (as stored) and its tallies to `outFile` as JSON.
 *
 *   node --import tsx busy-worker.ts '<WorkerJob as JSON>'
 */
import { writeFile } from 'node:fs/promises';
import type { ConversationMessage } from '../../../src/conversation/types.js';
import type { CompactionSettings } from '../../../src/compaction/compaction-settings.js';
import { createMemfold } from '../../../src/memfold.js';
import { createTokenCounter } from '../../../src/tokens/create-token-counter.js';
import { sampleTurns, turnMessages } from '../../support/arbitraries.js';

export interface WorkerJob {
  databaseUrl: string;
  lanceDir: string;
  conversations: string[];
  workers: number;
  /** Wall-clock end of the run (ms since the epoch): every worker stops starting new work after it. */
  deadline: number;
  seed: number;
  /** Distinguishes this process in call ids and seeds. */
  name: string;
  settings: Partial<CompactionSettings>;
  outFile: string;
}

export interface WorkerReport {
  appended: ConversationMessage[];
  appends: number;
  /** Appends to a conversation while a compaction of it (by either process) was in flight. */
  appendsDuringCompaction: number;
  compactions: Record<string, number>;
  /** Failed compactions (they lose nothing; the test shows why they failed). */
  failures: string[];
}

const job = JSON.parse(process.argv[2]!) as WorkerJob;
const memfold = await createMemfold({
  env: {},
  config: { databaseUrl: job.databaseUrl, lancedbUri: job.lanceDir },
  compaction: job.settings,
  tokens: createTokenCounter({ mode: 'chars4' }),
});

const report: WorkerReport = { appended: [], appends: 0, appendsDuringCompaction: 0, compactions: {}, failures: [] };

async function worker(index: number): Promise<void> {
  for (let step = 0; Date.now() < job.deadline; step++) {
    const seed = job.seed + 7919 * index + step;
    const conversationId = job.conversations[(Math.imul(seed, 2654435761) >>> 0) % job.conversations.length]!;
    if (step % 3 !== 2) {
      const turns = sampleTurns(seed, 1 + (seed % 3));
      // No times given: the store stamps them under the conversation's lock, in seq order.
      const messages = turnMessages(turns, `${job.name}w${index}s${step}`);
      // An operation still planned or archived is a compaction in flight, in this process or the other.
      const inFlight = (await memfold.persistence.listPendingOperations(conversationId)).length > 0;
      report.appended.push(...(await memfold.append(conversationId, messages)));
      if (inFlight) report.appendsDuringCompaction++;
      report.appends++;
    } else {
      const result = await memfold.compact(conversationId, { force: step % 2 === 0 });
      const key = result.status === 'skipped' ? `skipped:${result.skipReason}` : result.status === 'failed' ? `failed:${result.failureCode}` : result.status;
      report.compactions[key] = (report.compactions[key] ?? 0) + 1;
      if (result.status === 'failed') report.failures.push(`${result.failureCode}: ${result.error}`);
    }
  }
}

await Promise.all(Array.from({ length: job.workers }, (_, i) => worker(i)));
await writeFile(job.outFile, JSON.stringify(report));
await memfold.close();
process.exit(0);
