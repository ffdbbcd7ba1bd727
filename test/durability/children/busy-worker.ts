/**
 * Child process of the concurrency test: `workers` async workers append random turns to random
 * conversations and compact them, `steps` times each, on a shared PostgreSQL database and LanceDB
 * folder. Writes every message it appended (as stored) and its tallies to `outFile` as JSON.
 *
 * Before that, the two processes meet on one conversation, in an order set by files rather than by
 * how fast either runs: the `hold` process compacts it and its summarizer waits, inside the
 * conversation's lock, until the `meet` process has appended to the conversation and tried to compact
 * it too (which must find it busy).
 *
 *   node --import tsx busy-worker.ts '<WorkerJob as JSON>'
 */
import { access, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConversationMessage } from '../../../src/conversation/types.js';
import type { CompactionSettings } from '../../../src/compaction/compaction-settings.js';
import { createMemfold } from '../../../src/memfold.js';
import { createExtractiveSummarizer } from '../../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../../src/summarizer/summarizer.js';
import { createTokenCounter } from '../../../src/tokens/create-token-counter.js';
import { sampleTurns, turnMessages } from '../../support/arbitraries.js';

export interface WorkerJob {
  databaseUrl: string;
  lanceDir: string;
  conversations: string[];
  workers: number;
  /** Appends and compactions each worker makes: a count, so a slow machine does the same work as a fast one. */
  steps: number;
  /** This process's part in the meeting on one conversation, and the files that order it. */
  meeting: { role: 'hold' | 'meet'; conversationId: string; heldFile: string; releasedFile: string };
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
  /** How this process's compaction of the meeting conversation ended (`skipped:busy` expected of `meet`). */
  meeting: string;
}

/** Waits for another process to create `file`: an event, however long it takes to come. */
async function until(file: string): Promise<void> {
  for (;;) {
    try {
      return await access(file);
    } catch {
      await sleep(20);
    }
  }
}

/** The offline summarizer, whose first request (made under the conversation's lock) waits for the other process. */
function holdingSummarizer(meeting: WorkerJob['meeting']): Summarizer {
  const extractive = createExtractiveSummarizer();
  let first = meeting.role === 'hold';
  return {
    id: extractive.id,
    contextWindow: extractive.contextWindow,
    ...(extractive.estimatesUsage !== undefined ? { estimatesUsage: extractive.estimatesUsage } : {}),
    ...(extractive.promptOverhead ? { promptOverhead: (n: number) => extractive.promptOverhead!(n) } : {}),
    async summarize(request) {
      if (first) {
        first = false;
        await writeFile(meeting.heldFile, '');
        await until(meeting.releasedFile);
      }
      return extractive.summarize(request);
    },
  };
}

const job = JSON.parse(process.argv[2]!) as WorkerJob;
const memfold = await createMemfold({
  env: {},
  config: { databaseUrl: job.databaseUrl, lancedbUri: job.lanceDir },
  compaction: job.settings,
  tokens: createTokenCounter({ mode: 'chars4' }),
  summarizer: holdingSummarizer(job.meeting),
});

const report: WorkerReport = { appended: [], appends: 0, appendsDuringCompaction: 0, compactions: {}, failures: [], meeting: '' };

const keyOf = (result: Awaited<ReturnType<typeof memfold.compact>>) =>
  result.status === 'skipped' ? `skipped:${result.skipReason}` : result.status === 'failed' ? `failed:${result.failureCode}` : result.status;

/** The meeting: `hold` compacts while `meet` appends and finds the conversation busy, then lets `hold` go on. */
async function meet(): Promise<void> {
  const { role, conversationId, heldFile, releasedFile } = job.meeting;
  if (role === 'hold') {
    report.appended.push(...(await memfold.append(conversationId, turnMessages(sampleTurns(job.seed, 12), `${job.name}hold`))));
    report.appends++;
    report.meeting = keyOf(await memfold.compact(conversationId, { force: true }));
    return;
  }
  await until(heldFile);
  report.appended.push(...(await memfold.append(conversationId, turnMessages(sampleTurns(job.seed, 2), `${job.name}meet`))));
  report.appends++;
  report.appendsDuringCompaction++;
  report.meeting = keyOf(await memfold.compact(conversationId, { force: true }));
  await writeFile(releasedFile, '');
}

async function worker(index: number): Promise<void> {
  for (let step = 0; step < job.steps; step++) {
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
      const key = keyOf(result);
      report.compactions[key] = (report.compactions[key] ?? 0) + 1;
      if (result.status === 'failed') report.failures.push(`${result.failureCode}: ${result.error}`);
    }
  }
}

await meet();
await Promise.all(Array.from({ length: job.workers }, (_, i) => worker(i)));
await writeFile(job.outFile, JSON.stringify(report));
await memfold.close();
process.exit(0);
