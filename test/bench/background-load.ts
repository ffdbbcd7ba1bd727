/**
 * Background compaction under load: `memfold worker` processes take the jobs of many conversations that keep
 * growing, against a fake model with latency and a rate limit (the provider's bound). Every worker and the app process is
 * given that whole limit as MEMFOLD_MODEL_RPM: with PostgreSQL it is one limit shared by them all, their request
 * starts reserved in the database (`memfold_rate_slots`). Reports compacting jobs/min against the bound the rate limit sets (requests per minute over
 * model requests per compacting job), summaries written offline (the model's fallback), queue lag (job created to started) p50/p95,
 * hard-window fallbacks in the appending process, messages lost, and the largest context seen at any turn against
 * the window. PostgreSQL only (pg-boss); skipped without DATABASE_URL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { queueNames } from '../../src/background/pg-boss-queue.js';
import { createMemfold } from '../../src/memfold.js';
import type { MemfoldEvent } from '../../src/memfold-options.js';
import { startFakeOpenAIProcess } from '../support/fake-openai-process.js';
import { createBenchDatabase, fmt, now, pct, percentile, sized, syntheticMessages, table, tempDir, type BenchOptions, type BenchResult } from './bench-kit.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
const WINDOW = 4_000;
/** Concurrent appenders, each taking every LANES-th conversation. */
const LANES = 8;
const LATENCY_MS = 200;

interface LoadShape {
  workers: number;
  conversations: number;
  seconds: number;
  /** The provider's limit, requests per minute, over all workers. */
  rpm: number;
  /** The conversations' context window (a smoke run's is small, so that a few turns queue a job). */
  window: number;
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  // MEMFOLD_BENCH_RPM sets another provider limit (e.g. 30, where the model rather than 2 cores is the limit).
  const rpm = Number(process.env.MEMFOLD_BENCH_RPM || 60);
  const shape: LoadShape = sized(options, {
    // At least one conversation per lane (LANES), else a lane has nothing to append to.
    smoke: { workers: 1, conversations: LANES, seconds: 8, rpm, window: 1_000 },
    quick: { workers: 2, conversations: 40, seconds: 60, rpm, window: WINDOW },
    full: { workers: 4, conversations: 200, seconds: 180, rpm, window: WINDOW },
  });
  if (!options.databaseUrl)
    return { name: 'background-load', title: 'Background compaction under load', markdown: 'Skipped: needs DATABASE_URL (pg-boss).', json: null };
  const database = await createBenchDatabase(options.databaseUrl);
  const lance = await tempDir('load');
  const model = await startFakeOpenAIProcess({ latencyMs: LATENCY_MS, rateLimit: { requestsPerMinute: shape.rpm } });
  const env = {
    MEMFOLD_DATABASE_URL: database.url,
    LANCEDB_URI: `${lance.dir}/lancedb`,
    OPENAI_BASE_URL: model.baseURL,
    MEMFOLD_SUMMARY_MODEL: 'fake-model',
    // The provider's whole limit: shared through PostgreSQL by every process, not divided among them.
    MEMFOLD_MODEL_RPM: String(shape.rpm),
    MEMFOLD_JOB_SUPERVISE_SECONDS: '2',
  };
  const workers: ChildProcess[] = [];
  let hardWindow = 0;
  let queued = 0;
  const onEvent = (event: MemfoldEvent) => {
    if (event.type === 'hard_window_fallback') hardWindow++;
    if (event.type === 'compaction_queued' && event.queued) queued++;
  };
  const app = await createMemfold({ env, compaction: { contextWindow: shape.window, background: true }, onEvent });
  try {
    for (let i = 0; i < shape.workers; i++) {
      workers.push(spawn(process.execPath, [BIN, 'worker', '--concurrency', '2'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' }));
    }
    const ids = Array.from({ length: shape.conversations }, (_, i) => `load-${i}`);
    const next = new Map(ids.map((id) => [id, 0]));
    let appended = 0;
    let largest = 0;
    const started = now();
    options.log(`${shape.workers} workers, ${shape.conversations} conversations, ${shape.seconds} s, ${shape.rpm} requests/min, ${LATENCY_MS} ms a request`);
    // Each lane appends a turn to one conversation after another, as users would, and reads the context as the assistant would.
    const lane = async (lanes: number, index: number) => {
      for (let round = 0; now() - started < shape.seconds * 1000; round++) {
        for (let c = index; c < ids.length; c += lanes) {
          const id = ids[c]!;
          const from = next.get(id)!;
          await app.append(id, syntheticMessages(from, 4));
          next.set(id, from + 4);
          appended += 4;
          await app.context(id);
          largest = Math.max(largest, (await app.usage(id)).tokens);
          if (now() - started >= shape.seconds * 1000) return;
        }
      }
    };
    await Promise.all(Array.from({ length: LANES }, (_, i) => lane(LANES, i)));
    const appendSeconds = (now() - started) / 1000;
    const endedAt = Date.now();
    const stats = await model.stats();
    const jobs = await jobRows(database.url, queueNames('default').jobs);
    // Jobs that compacted: a job can also find nothing to do (a hard-window fallback or an earlier job got there first).
    const completed = jobs.filter((j) => j.state === 'completed' && j.status === 'compacted');
    const skipped = jobs.filter((j) => j.state === 'completed' && j.status !== 'compacted').length;
    const lags = jobs.filter((j) => j.started !== null).map((j) => j.started! - j.created);
    const fallbacks = completed.reduce((sum, j) => sum + (j.fallbacks ?? 0), 0);
    // Summarizer calls per compacting job, from the jobs' outcomes: the requests the model refused (429) and those of
    // jobs still running at the end are not a job's cost.
    const requestsPerJob = completed.length > 0 ? completed.reduce((sum, j) => sum + (j.modelCalls ?? 0), 0) / completed.length : 0;
    // What the provider accepted per minute, against its limit.
    const acceptedPerMinute = (stats.chat.filter((r) => !r.rateLimited).length / appendSeconds) * 60;
    const bound = requestsPerJob > 0 ? shape.rpm / requestsPerJob : 0;
    const jobsPerMinute = (completed.length / appendSeconds) * 60;
    // The same once the first job started: before it no conversation had reached its trigger, and nothing could run.
    const firstStart = Math.min(...jobs.flatMap((j) => (j.started === null ? [] : [j.started])));
    const steadyMinutes = (endedAt - firstStart) / 60_000;
    const steadyJobs = completed.filter((j) => j.completed !== null && j.completed <= endedAt).length;
    const steadyJobsPerMinute = steadyMinutes > 0 ? steadyJobs / steadyMinutes : 0;
    const steadyAcceptedPerMinute =
      steadyMinutes > 0 ? stats.chat.filter((r) => !r.rateLimited && r.at >= firstStart && r.at <= endedAt).length / steadyMinutes : 0;
    const { lost, archived } = await lostMessages(app, ids, next);
    const json = {
      shape,
      appendSeconds,
      appended,
      archived,
      archivedPerSecondPerWorker: archived / appendSeconds / shape.workers,
      queued,
      completed: completed.length,
      jobsPerMinute,
      bound,
      requestsPerJob,
      acceptedPerMinute,
      firstJobStartedSeconds: (firstStart - (endedAt - appendSeconds * 1000)) / 1000,
      steadyJobsPerMinute,
      steadyAcceptedPerMinute,
      fallbacks,
      rateLimited: stats.rateLimited,
      lagP50: percentile(lags, 50),
      lagP95: percentile(lags, 95),
      hardWindow,
      lost,
      largest,
      window: shape.window,
    };
    const markdown = table(
      [
        'workers × conversations',
        'rpm',
        'jobs/min (whole run)',
        'jobs/min (from the first job)',
        'bound',
        'of bound (from the first job)',
        'model requests/min (from the first job)',
        'offline summaries',
        '429s',
        'lag p50',
        'lag p95',
        'hard-window fallbacks',
        'lost',
        'largest context / window',
      ],
      [
        [
          `${shape.workers} × ${shape.conversations}`,
          shape.rpm,
          fmt(jobsPerMinute, 1),
          fmt(steadyJobsPerMinute, 1),
          fmt(bound, 1),
          pct(bound > 0 ? steadyJobsPerMinute / bound : 0),
          fmt(steadyAcceptedPerMinute, 1),
          fallbacks,
          stats.rateLimited,
          `${fmt(json.lagP50 / 1000, 1)} s`,
          `${fmt(json.lagP95 / 1000, 1)} s`,
          hardWindow,
          lost,
          `${largest} / ${shape.window}`,
        ],
      ],
    );
    return {
      name: 'background-load',
      title: 'Background compaction under load',
      markdown: `${markdown}\n\n${appended} messages appended in ${fmt(appendSeconds, 0)} s; ${archived} archived by the workers (${fmt(json.archivedPerSecondPerWorker, 1)} messages/s per worker); ${requestsPerJob.toFixed(2)} model requests per compacting job; the model accepted ${fmt(acceptedPerMinute, 1)} requests/min of its ${shape.rpm} over the whole run; the first job started ${fmt(json.firstJobStartedSeconds, 1)} s in; ${skipped} jobs found nothing to do.`,
      json,
    };
  } finally {
    for (const worker of workers) worker.kill('SIGTERM');
    await Promise.all(workers.map((w) => new Promise((resolve) => (w.exitCode !== null ? resolve(null) : w.once('exit', resolve)))));
    await app.close();
    await model.close();
    await database.drop();
    await lance.remove();
  }
}

async function jobRows(url: string, name: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // pg-boss makes its tables when the first job is queued: none yet means no jobs.
    const { rows } = await client
      .query(
        `select state, extract(epoch from created_on) * 1000 as created, extract(epoch from started_on) * 1000 as started, extract(epoch from completed_on) * 1000 as completed, (output->>'fallbacks')::int as fallbacks, (output->>'modelCalls')::int as model_calls, output->>'status' as status
         from memfold_jobs.job where name = $1`,
        [name],
      )
      .catch((error: { code?: string }) => {
        if (error.code === '42P01') return { rows: [] };
        throw error;
      });
    return rows.map((r) => ({
      state: r.state as string,
      created: Number(r.created),
      started: r.started === null ? null : Number(r.started),
      completed: r.completed === null ? null : Number(r.completed),
      fallbacks: r.fallbacks as number | null,
      modelCalls: r.model_calls as number | null,
      status: r.status as string | null,
    }));
  } finally {
    await client.end();
  }
}

/** Appended messages neither live nor in an archived transcript. Ids are the store's: count by seq-free position instead, per conversation. */
async function lostMessages(
  app: Awaited<ReturnType<typeof createMemfold>>,
  ids: readonly string[],
  appendedCount: Map<string, number>,
): Promise<{ lost: number; archived: number }> {
  let lost = 0;
  let archivedTotal = 0;
  for (const id of ids) {
    const live = (await app.persistence.loadHistory(id)).filter((m) => m.kind !== 'clip_archive').length;
    const transcripts = await app.archive.list({ conversationId: id, kind: 'transcript' });
    const archived = transcripts.reduce((sum, t) => sum + t.sourceIds.length, 0);
    lost += Math.max(0, appendedCount.get(id)! - live - archived);
    archivedTotal += archived;
  }
  return { lost, archived: archivedTotal };
}
