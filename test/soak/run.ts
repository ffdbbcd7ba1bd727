/**
 * The crash soak: `npm run soak -- --runs N [--seed S]`. On a fresh PostgreSQL database (DATABASE_URL's server) and
 * a LanceDB folder in a temp folder, runs at once:
 * - the in-process lane (`in-process-lane.ts`): compactions in a child process SIGKILLed at every step boundary;
 * - worker lanes (`worker-lane.ts`), each on its own namespace: `memfold worker` processes SIGKILLed mid-job, then
 *   another worker finishing the jobs.
 * After every kill: reconcile and the full invariants; for jobs: completed or dead-lettered. Prints a summary;
 * exits 1 on any violation, with the seed and the run to replay, keeping the database and folder to inspect.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { openJobBoss } from '../../src/background/pg-boss-queue.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { bundleChild } from '../durability/child-process.js';
import { createPostgresTestDatabase } from '../support/backends.js';
import { startFakeOpenAIProcess } from '../support/fake-openai-process.js';
import { IN_PROCESS_SETTINGS, runInProcessLane } from './in-process-lane.js';
import { installSlowCommit, newTally, parseSoakArgs, SoakViolation, type SoakTally } from './soak-kit.js';
import { runWorkerRound, type WorkerLane } from './worker-lane.js';

/** The victims' model: every summary takes this long, so that a kill lands mid-job. */
const MODEL_LATENCY_MS = 200;
const HEARTBEAT_SECONDS = 10;

const args = parseSoakArgs(process.argv.slice(2));
const serverUrl = process.env.DATABASE_URL;
if (!serverUrl) {
  console.error('memfold soak: DATABASE_URL must name a PostgreSQL server (a fresh database is created there and dropped)');
  process.exit(2);
}
const started = Date.now();
const rounds = args.workerShare === 0 ? 0 : Math.ceil((args.runs * args.workerShare) / args.batch);
const inProcessRuns = Math.max(0, args.runs - rounds * args.batch);
const replay = `npm run soak -- --runs ${args.runs} --seed ${args.seed}${args.workerShare !== 0.5 ? ` --worker-share ${args.workerShare}` : ''}${args.batch !== 8 ? ` --batch ${args.batch}` : ''}${args.lanes !== 2 ? ` --lanes ${args.lanes}` : ''}`;
console.log(`memfold soak: seed ${args.seed}; ${inProcessRuns} in-process runs, ${rounds} worker kills of ${args.batch} jobs each, ${args.lanes} worker lanes`);

const database = await createPostgresTestDatabase(serverUrl);
const lanceDir = await mkdtemp(path.join(os.tmpdir(), 'memfold-soak-'));
const child = await bundleChild(new URL('../durability/children/compact-until-killed.ts', import.meta.url), { bundlePackages: true });
const tally = newTally();
const children = new Set<ChildProcess>();
const memfolds: Memfold[] = [];
let violation: SoakViolation | Error | undefined;
const stopped = () => violation !== undefined;
const admin = new pg.Client({ connectionString: database.url });
let boss: PgBoss | undefined;
const lanes: WorkerLane[] = [];
let fake: Awaited<ReturnType<typeof startFakeOpenAIProcess>> | undefined;

try {
  const memfold = await createMemfold({
    env: {},
    config: { databaseUrl: database.url, lancedbUri: lanceDir },
    compaction: IN_PROCESS_SETTINGS,
    tokens: createTokenCounter({ mode: 'chars4' }),
  });
  memfolds.push(memfold);
  await admin.connect();
  await installSlowCommit(admin);
  fake = await startFakeOpenAIProcess({ latencyMs: MODEL_LATENCY_MS });

  // The soak's own look at the jobs: no supervision, no migration (started once the lanes made the schema).
  boss = new PgBoss({ connectionString: database.url, schema: 'memfold_jobs', supervise: false, migrate: false });
  boss.on('error', (error) => console.error(`memfold soak: pg-boss: ${error.message}`));
  // Each lane's queues, made one after the other (pg-boss creates its schema on the first): heartbeat 10 s;
  // even lanes retry a job twice, odd lanes once, so that a job killed twice there is dead-lettered.
  for (let index = 0; index < (rounds === 0 ? 0 : args.lanes); index++) {
    const namespace = `soak-w${index}`;
    const jobRetries = index % 2 === 0 ? 2 : 1;
    const jobs = { connectionString: database.url, namespace, retryLimit: jobRetries, heartbeatSeconds: HEARTBEAT_SECONDS, superviseIntervalSeconds: 1 };
    await (await openJobBoss(jobs)).stop({ graceful: false });
    const queued = new Map<string, string>();
    const open = () =>
      createMemfold({
        env: {},
        config: { databaseUrl: database.url, lancedbUri: lanceDir, namespace, jobRetries, jobHeartbeatSeconds: HEARTBEAT_SECONDS, jobSuperviseSeconds: 1 },
        compaction: { ...IN_PROCESS_SETTINGS, background: true },
        onEvent: (event) => {
          if (event.type === 'compaction_queued' && event.queued && event.jobId) queued.set(event.conversationId, event.jobId);
        },
      });
    const laneMemfold = await open();
    const conversations = Array.from({ length: args.batch }, (_, k) => (k % 2 === 0 ? `w${index}-'q'-${k}` : `w${index}-plain-${k}`));
    lanes.push({
      index,
      namespace,
      memfold: laneMemfold,
      open,
      queued,
      boss,
      admin,
      conversations,
      appended: new Map(conversations.map((id) => [id, []])),
      workerEnv: {
        MEMFOLD_DATABASE_URL: database.url,
        LANCEDB_URI: lanceDir,
        MEMFOLD_NAMESPACE: namespace,
        MEMFOLD_JOB_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
        MEMFOLD_JOB_SUPERVISE_SECONDS: '1',
        MEMFOLD_JOB_RETRIES: String(jobRetries),
        LANCEDB_LOG: 'error',
      },
      slowModelUrl: fake.baseURL,
      jobRetries,
      seed: args.seed,
      tally,
      children,
      deadSeen: new Set(),
    });
  }
  if (lanes.length > 0) await boss.start();

  const fail = (error: unknown) => {
    violation ??= error instanceof Error ? error : new Error(String(error));
  };
  let nextRound = 0;
  const workerLane = async (lane: WorkerLane) => {
    while (!stopped() && nextRound < rounds) {
      const round = nextRound++;
      await runWorkerRound(lane, round).catch((error: unknown) => {
        throw error instanceof SoakViolation ? error : new SoakViolation(`worker lane ${lane.index}`, round, (error as Error).stack ?? String(error));
      });
    }
  };
  const progress = setInterval(() => {
    const minutes = ((Date.now() - started) / 60_000).toFixed(1);
    console.log(
      `  ${minutes} min: in-process ${tally.runs.inProcess}/${inProcessRuns}, worker-job runs ${tally.runs.worker}/${rounds * args.batch} (${tally.workerKills} worker kills)`,
    );
  }, 60_000);
  await Promise.all([
    runInProcessLane({
      child,
      memfold,
      admin,
      databaseUrl: database.url,
      lanceDir,
      seed: args.seed,
      runs: inProcessRuns,
      parallel: args.parallel,
      tally,
      stopped,
    }).catch(fail),
    ...lanes.map((lane) => workerLane(lane).catch(fail)),
  ]);
  clearInterval(progress);
} catch (error) {
  violation ??= error as Error;
} finally {
  for (const worker of children) worker.kill('SIGKILL');
  await boss?.stop({ graceful: false }).catch(() => undefined);
  for (const memfold of [...memfolds, ...lanes.map((lane) => lane.memfold)]) await memfold.close().catch(() => undefined);
  await admin.end().catch(() => undefined);
  await fake?.close();
  await child.remove();
}

console.log(summary(tally));
if (violation) {
  const run = violation instanceof SoakViolation ? `${violation.lane}, run ${violation.run}` : 'setup or teardown';
  console.error(`\nVIOLATION (seed ${args.seed}, ${run}):\n${violation.stack ?? violation.message}`);
  console.error(`replay: DATABASE_URL=... ${replay}`);
  console.error(`kept for inspection: database ${database.url}, LanceDB ${lanceDir}`);
  process.exit(1);
}
await database.drop();
await rm(lanceDir, { recursive: true, force: true });
process.exit(0);

function summary(t: SoakTally): string {
  const list = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([key, n]) => `${key} ${n}`)
      .join(', ') || 'none';
  const inProcessKills = Object.values(t.inProcessKills).reduce((a, b) => a + b, 0);
  const seconds = Math.round((Date.now() - started) / 1000);
  return [
    '',
    `memfold crash soak, seed ${args.seed}: ${t.runs.inProcess + t.runs.worker} runs (${t.runs.inProcess} in-process, ${t.runs.worker} worker-job) in ${Math.floor(seconds / 60)}m ${seconds % 60}s`,
    `  in-process SIGKILLs by step: ${inProcessKills} (${list(t.inProcessKills)}); ${t.inProcessFinished} finished before their kill point`,
    `  in-process compactions that failed (rolled back) before their kill point: ${list(t.inProcessFailed)}`,
    `  worker SIGKILLs: ${t.workerKills} memfold worker processes, killed at: ${list(t.workerTriggers)}`,
    `    their ${Object.values(t.workerJobSteps).reduce((a, b) => a + b, 0)} jobs at the kill: ${list(t.workerJobSteps)}`,
    `  reconcile: finished ${t.reconcile.finished}, undone ${t.reconcile.undone}, busy ${t.reconcile.busy}; interrupted operations left to the job's retry and reconciled by it: ${t.leftToRetry}`,
    `  jobs run twice by a live worker (a new attempt while one still ran): ${t.liveWorkerReruns}`,
    `  jobs: ${t.jobs.enqueued} enqueued, ${t.jobs.completed} completed (${list(t.jobs.byStatus)}), ${t.jobs.deadLettered} dead-lettered`,
    `  messages: ${t.appended} appended, ${t.messagesLost} lost, ${t.duplicates} duplicated`,
    `  result: ${violation ? 'VIOLATION' : 'OK, every invariant held after every kill'}; replay with: ${replay}`,
  ].join('\n');
}
