/**
 * memfold through its real OpenAI adapter against the fake OpenAI-compatible server:
 * (1) the overhead ratio: wall time of one compaction / pure model time (calls x the server's latency);
 * (2) throughput: compactions per minute of many conversations compacted at once, at model-queue
 *     concurrency 1, 4 and 16, against the server's rate limit and the queue's own bound.
 * Stores: PGlite and LanceDB in temp folders. Not PostgreSQL: there, ten or more compactions at once in one
 * process exhaust the pg pool (10 connections, one held by each conversation lock) and hang.
 */
import type { CompactionResult } from '../../src/compaction/compaction-result.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import type { FakeOpenAIOptions } from '../support/fake-openai-server.js';
import { startFakeOpenAIProcess, type FakeOpenAIProcess } from '../support/fake-openai-process.js';
import { fmt, median, now, sized, syntheticMessages, table, tempHome, type BenchOptions, type BenchResult } from './bench-kit.js';

/** Messages of each conversation of the ratio runs (about a dozen summarizer calls). */
const RATIO_MESSAGES = 1_000;
/** Messages of each conversation of the throughput runs (about three summarizer calls beyond the verbatim tail). */
const THROUGHPUT_MESSAGES = 480;
const THROUGHPUT_LATENCY_MS = 200;
const RATE_LIMIT_RPM = 1_200;
const CONCURRENCIES = [1, 4, 16];

/**
 * A memfold on fresh stores that summarizes through `server`, warmed up by one small compaction (indexes
 * created, encoders loaded), and a way to drop it all.
 */
async function open(
  server: FakeOpenAIProcess,
  modelConcurrency: number,
  modelRequestsPerMinute?: number,
): Promise<{ memfold: Memfold; dispose(): Promise<void> }> {
  const home = await tempHome('latency');
  const config = {
    home: home.dir,
    openaiBaseUrl: server.baseURL,
    summaryModel: 'fake',
    modelConcurrency,
    ...(modelRequestsPerMinute ? { modelRequestsPerMinute } : {}),
  };
  const memfold = await createMemfold({ env: {}, config });
  await memfold.append('warm-up', syntheticMessages(0, 400));
  check(await memfold.compact('warm-up', { force: true }));
  return {
    memfold,
    async dispose() {
      await memfold.close();
      await home.remove();
    },
  };
}

/** The fake server runs in a process of its own, as a model server does: memfold's CPU does not delay its answers. */
async function withServer<T>(options: FakeOpenAIOptions, fn: (server: FakeOpenAIProcess) => Promise<T>): Promise<T> {
  const server = await startFakeOpenAIProcess(options);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

function check(result: CompactionResult): CompactionResult {
  if (result.status !== 'compacted') throw new Error(`compaction ${result.status}: ${result.error ?? result.skipReason}`);
  return result;
}

interface RatioRow {
  latencyMs: number;
  modelCalls: number;
  wallMs: number;
  modelMs: number;
  ratio: number;
  overheadMs: number;
  /**
   * The same number of bare chat requests one after another (`fetch`, no memfold, no openai client) over the same
   * latency: the part of the ratio that is the fake server, HTTP and this machine's timers, not memfold.
   */
  bareRatio: number;
}

/** `calls` chat requests to `server`, one after another, with `fetch` alone: wall / (calls x latency). */
async function bareRatio(server: FakeOpenAIProcess, calls: number, latencyMs: number): Promise<number> {
  const body = JSON.stringify({ model: 'fake', messages: [{ role: 'user', content: 'Summarize.' }] });
  const t0 = now();
  for (let i = 0; i < calls; i++) {
    const response = await fetch(`${server.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await response.json();
  }
  return (now() - t0) / (calls * latencyMs);
}

/** One compaction per conversation, one after another, each on a fresh conversation of RATIO_MESSAGES. */
async function ratio(latencyMs: number, conversations: number): Promise<RatioRow> {
  return withServer({ latencyMs }, async (server) => {
    const { memfold, dispose } = await open(server, 4);
    try {
      const runs: Omit<RatioRow, 'bareRatio'>[] = [];
      for (let i = 0; i < conversations; i++) {
        const id = `ratio-${i}`;
        await memfold.append(id, syntheticMessages(0, RATIO_MESSAGES));
        const t0 = now();
        const result = check(await memfold.compact(id, { force: true }));
        const wallMs = now() - t0;
        const modelMs = result.modelCalls * latencyMs;
        runs.push({ latencyMs, modelCalls: result.modelCalls, wallMs, modelMs, ratio: wallMs / modelMs, overheadMs: wallMs - modelMs });
      }
      const middle = runs.sort((a, b) => a.ratio - b.ratio)[Math.floor(runs.length / 2)]!;
      return { ...middle, bareRatio: await bareRatio(server, middle.modelCalls, latencyMs) };
    } finally {
      await dispose();
    }
  });
}

interface ThroughputRow {
  concurrency: number;
  /** The model queue's own rate (`modelRequestsPerMinute`, MEMFOLD_MODEL_RPM) when set: the server's limit. */
  queueRpm?: number;
  /** CPU time of this process (every thread: user + system) over the run, per compaction; the server is another process. */
  cpuMsPerCompaction: number;
  conversations: number;
  wallMs: number;
  compactionsPerMinute: number;
  /** Summarizer calls per compaction (fold steps, whether the model or the fallback answered). */
  callsPerCompaction: number;
  /** Compactions per minute allowed by the rate limit and by the queue (concurrency x 60 s / latency). */
  rateBound: number;
  queueBound: number;
  requests: number;
  rateLimited: number;
  /** Summaries the extractive fallback wrote because the server kept refusing (retries spent). */
  fallbacks: number;
  compactionP50Ms: number;
  compactionMaxMs: number;
}

/** Every conversation compacted at once (one `compact` each, all in flight), sharing the model queue. */
async function throughput(concurrency: number, conversations: number, queueRpm?: number): Promise<ThroughputRow> {
  return withServer({ latencyMs: THROUGHPUT_LATENCY_MS, rateLimit: { requestsPerMinute: RATE_LIMIT_RPM } }, async (server) => {
    const { memfold, dispose } = await open(server, concurrency, queueRpm);
    try {
      const ids = Array.from({ length: conversations }, (_, i) => `conversation-${i}`);
      for (const id of ids) await memfold.append(id, syntheticMessages(0, THROUGHPUT_MESSAGES));
      const before = await server.stats();
      const cpu0 = process.cpuUsage();
      const t0 = now();
      const results = await Promise.all(
        ids.map(async (id) => {
          const started = now();
          const result = check(await memfold.compact(id, { force: true }));
          return { result, ms: now() - started };
        }),
      );
      const wallMs = now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const after = await server.stats();
      const requests = after.chatRequests - before.chatRequests;
      const rateLimited = after.rateLimited - before.rateLimited;
      const fallbacks = results.reduce((sum, r) => sum + r.result.fallbacks.length, 0);
      const callsPerCompaction = results.reduce((sum, r) => sum + r.result.modelCalls, 0) / conversations;
      return {
        concurrency,
        ...(queueRpm ? { queueRpm } : {}),
        cpuMsPerCompaction: (cpu.user + cpu.system) / 1000 / conversations,
        conversations,
        wallMs,
        compactionsPerMinute: (conversations * 60_000) / wallMs,
        callsPerCompaction,
        rateBound: RATE_LIMIT_RPM / callsPerCompaction,
        queueBound: (concurrency * 60_000) / THROUGHPUT_LATENCY_MS / callsPerCompaction,
        requests,
        rateLimited,
        fallbacks,
        compactionP50Ms: median(results.map((r) => r.ms)),
        compactionMaxMs: Math.max(...results.map((r) => r.ms)),
      };
    } finally {
      await dispose();
    }
  });
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const latencies = sized(options, { smoke: [10], quick: [50, 200], full: [50, 200, 1_000] });
  const ratioConversations = options.quick ? 1 : 3;
  const conversations = sized(options, { smoke: 2, quick: 20, full: 100 });
  const concurrencies = options.smoke ? [CONCURRENCIES[0]!] : CONCURRENCIES;

  const ratios: RatioRow[] = [];
  for (const latencyMs of latencies) {
    options.log(`ratio: latency ${latencyMs} ms`);
    ratios.push(await ratio(latencyMs, ratioConversations));
  }
  const rows: ThroughputRow[] = [];
  for (const concurrency of concurrencies) {
    options.log(`throughput: ${conversations} conversations at concurrency ${concurrency}`);
    const row = await throughput(concurrency, conversations);
    options.log(`  ${fmt(row.compactionsPerMinute, 1)} compactions/min, ${row.rateLimited} x 429, ${row.fallbacks} fallbacks`);
    rows.push(row);
  }
  if (!options.smoke) {
    // The same at the highest concurrency with the queue's own rate set to the server's limit (MEMFOLD_MODEL_RPM).
    const concurrency = CONCURRENCIES.at(-1)!;
    options.log(`throughput: ${conversations} conversations at concurrency ${concurrency}, queue rate ${RATE_LIMIT_RPM}/min`);
    rows.push(await throughput(concurrency, conversations, RATE_LIMIT_RPM));
  }

  const markdown = [
    `Real OpenAI adapter (openai client, retries, model queue) against the fake server, which runs in a process of its own as a model server does; PGlite and LanceDB; default settings; forced compactions.`,
    '',
    `**Overhead ratio**: one compaction of a fresh ${fmt(RATIO_MESSAGES)}-message conversation; pure model time = calls x server latency${ratioConversations > 1 ? ` (median of ${ratioConversations})` : ''}. The fold's requests go out once the conversation is locked, beside tier 2's clearing and the journal (early fold), and the first re-summarize request runs beside the last fold requests, so own time is partly hidden under model time (a ratio can even fall below 1). Bare requests: as many chat requests one after another with \`fetch\` alone, to the same server: what the ratio owes to the server, HTTP and the machine, not to memfold.`,
    '',
    table(
      ['>server latency ms', '>model calls', '>wall ms', '>pure model ms', '>overhead ms', '>ratio', '>bare requests ratio'],
      ratios.map((r) => [fmt(r.latencyMs), fmt(r.modelCalls), fmt(r.wallMs), fmt(r.modelMs), fmt(r.overheadMs), fmt(r.ratio, 2), fmt(r.bareRatio, 2)]),
    ),
    '',
    `**Throughput**: ${conversations} conversations of ${THROUGHPUT_MESSAGES} messages compacted at once; server latency ${THROUGHPUT_LATENCY_MS} ms, rate limit ${fmt(RATE_LIMIT_RPM)} requests/min (429 with retry-after beyond it). Bounds in compactions/min: rate limit / calls per compaction, and concurrency x 60 s / latency / calls per compaction.${rows.some((r) => r.queueRpm) ? " The last row sets the queue's own rate to the server's limit (`modelRequestsPerMinute`, MEMFOLD_MODEL_RPM)." : ''} CPU ms/compaction: this process's CPU time (every thread) over the run, per compaction; 60,000 over it is what one fully busy core allows per minute, were all of it on one thread.`,
    '',
    table(
      [
        '>queue concurrency',
        '>queue rate/min',
        '>wall s',
        '>compactions/min',
        '>rate bound',
        '>queue bound',
        '>% of bound',
        '>calls/compaction',
        '>429s',
        '>fallbacks',
        '>p50 compaction s',
        '>max s',
        '>CPU ms/compaction',
      ],
      rows.map((r) => [
        fmt(r.concurrency),
        r.queueRpm ? fmt(r.queueRpm) : 'none',
        fmt(r.wallMs / 1000, 1),
        fmt(r.compactionsPerMinute, 1),
        fmt(r.rateBound, 1),
        fmt(r.queueBound, 1),
        fmt((100 * r.compactionsPerMinute) / Math.min(r.rateBound, r.queueBound)),
        fmt(r.callsPerCompaction, 2),
        fmt(r.rateLimited),
        fmt(r.fallbacks),
        fmt(r.compactionP50Ms / 1000, 1),
        fmt(r.compactionMaxMs / 1000, 1),
        fmt(r.cpuMsPerCompaction),
      ]),
    ),
    '',
    'Fallbacks: summaries written by the extractive summarizer because the server still answered 429 after the default 2 retries (MEMFOLD_MODEL_MAX_RETRIES); the compaction succeeds, with `fallbacks` in its result.',
  ].join('\n');
  return {
    name: 'latency',
    title: 'Latency and throughput against a fake OpenAI-compatible server',
    markdown,
    json: {
      ratioMessages: RATIO_MESSAGES,
      throughput: { messages: THROUGHPUT_MESSAGES, latencyMs: THROUGHPUT_LATENCY_MS, rateLimitRpm: RATE_LIMIT_RPM },
      ratios,
      rows,
    },
  };
}
