/**
 * memfold's own cost, with a summarizer that answers instantly: real stores (PGlite or PostgreSQL,
 * LanceDB with the hashing embedder), default settings, forced compactions.
 * (a) one compaction of a freshly appended conversation of N messages: ms per stage, µs per message compacted;
 * (b) the same conversation, now N messages archived: 500 new messages appended and compacted, 6 rounds;
 *     this must stay flat as N grows (cost follows the messages compacted, not the conversation's length).
 * Each case runs in its own process, so that its peak RSS is its own.
 */
import { pathToFileURL } from 'node:url';
import type { CompactionResult, CompactionStage } from '../../src/compaction/compaction-result.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import { runRawLimit, type RawLimit } from './overhead-raw.js';
import {
  createBenchDatabase,
  fmt,
  maxRssMiB,
  mean,
  median,
  now,
  syntheticMessages,
  table,
  sized,
  tempHome,
  timed,
  runInChild,
  type BenchOptions,
  type BenchResult,
} from './bench-kit.js';

const APPEND_BATCH = 1_000;
const NEW_MESSAGES = 500;
const ROUNDS = 6;
const STAGES: CompactionStage[] = ['clear', 'fold', 'archive', 'resummarize', 'commit'];
const CONVERSATION = 'bench-overhead';

/** A summarizer with no latency: a short fixed summary, usage counted as chars/4. */
function instantModel(): Summarizer & { calls: number } {
  const model = {
    id: 'instant',
    contextWindow: 128_000,
    estimatesUsage: true,
    calls: 0,
    async summarize(request: Parameters<Summarizer['summarize']>[0]) {
      model.calls++;
      const read = request.purpose === 'fold' ? request.lines.map((line) => line.text) : request.summaries;
      const chars = read.reduce((sum, text) => sum + text.length, 0);
      return {
        text: 'Summary: the user asked about order ORD-1042 and the refund; the assistant checked the status and promised an update.',
        usage: { inputTokens: Math.ceil(chars / 4), outputTokens: 28 },
        model: 'instant',
      };
    },
  };
  return model;
}

interface Compaction {
  archived: number;
  modelCalls: number;
  batches: number;
  resummarized: number;
  /** Wall time of memfold.compact: `load` (reading the live history) + `durationMs` of compress. */
  wallMs: number;
  loadMs: number;
  /** Inside compress but outside the timed stages: validation, plan, lock, reconcile, journal, frontier. */
  otherMs: number;
  stageMs: Record<CompactionStage, number>;
  usPerMessage: number;
  /**
   * The process's CPU time (user + system, every thread: LanceDB's and PGlite's included, PostgreSQL's server not)
   * over the compaction: on shared cores it is inflated far less than the wall time.
   */
  cpuMs: number;
}

async function compact(memfold: Memfold): Promise<Compaction> {
  const t0 = now();
  const cpu0 = process.cpuUsage();
  const result: CompactionResult = await memfold.compact(CONVERSATION, { force: true });
  const wallMs = now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (result.status !== 'compacted') throw new Error(`compaction ${result.status}: ${result.error ?? result.skipReason}`);
  const stageMs = Object.fromEntries(STAGES.map((s) => [s, result.stageMs[s] ?? 0])) as Record<CompactionStage, number>;
  const staged = STAGES.reduce((sum, s) => sum + stageMs[s], 0);
  return {
    archived: result.archivedMessages,
    modelCalls: result.modelCalls,
    batches: result.batches.length,
    resummarized: result.resummarized.length,
    wallMs,
    loadMs: wallMs - result.durationMs,
    otherMs: result.durationMs - staged,
    stageMs,
    usPerMessage: (wallMs * 1000) / result.archivedMessages,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

interface CaseResult {
  backend: 'pglite' | 'postgres';
  messages: number;
  appendMs: number;
  full: Compaction;
  /** The (b) rounds, in order. */
  rounds: Compaction[];
  /** Peak RSS of the case's own process. */
  peakRssMiB: number;
  /** The stores alone on as many fresh rows, in a process of its own (`overhead-raw.ts`). */
  raw: RawLimit;
}

/** A warm-up conversation compacted first in the same store: indexes created, encoders loaded, code compiled. */
const WARM_UP_MESSAGES = 200;

/** One case, in this process (see `runInChild`). */
async function runCase(backend: CaseResult['backend'], n: number, rounds: number, databaseUrl: string | undefined): Promise<Omit<CaseResult, 'raw'>> {
  const home = await tempHome(`overhead-${backend}`);
  const database = backend === 'postgres' ? await createBenchDatabase(databaseUrl!) : undefined;
  try {
    const memfold = await createMemfold({
      env: {},
      config: { home: home.dir, ...(database ? { databaseUrl: database.url } : {}) },
      summarizer: instantModel(),
    });
    try {
      await memfold.append('warm-up', syntheticMessages(0, WARM_UP_MESSAGES));
      await memfold.compact('warm-up', { force: true });
      const { ms: appendMs } = await timed(async () => {
        for (let i = 0; i < n; i += APPEND_BATCH) await memfold.append(CONVERSATION, syntheticMessages(i, Math.min(APPEND_BATCH, n - i)));
      });
      const full = await compact(memfold);
      const done: Compaction[] = [];
      for (let r = 0; r < rounds; r++) {
        await memfold.append(CONVERSATION, syntheticMessages(n + r * NEW_MESSAGES, NEW_MESSAGES));
        done.push(await compact(memfold));
      }
      return { backend, messages: n, appendMs, full, rounds: done, peakRssMiB: maxRssMiB() };
    } finally {
      await memfold.close();
    }
  } finally {
    await database?.drop();
    await home.remove();
  }
}

/** Mean of the (b) rounds, stage by stage: the amortized cost, periodic index maintenance included. */
function meanRound(rounds: readonly Compaction[]): Compaction {
  const avg = (pick: (c: Compaction) => number) => mean(rounds.map(pick));
  return {
    archived: avg((c) => c.archived),
    modelCalls: avg((c) => c.modelCalls),
    batches: avg((c) => c.batches),
    resummarized: avg((c) => c.resummarized),
    wallMs: avg((c) => c.wallMs),
    loadMs: avg((c) => c.loadMs),
    otherMs: avg((c) => c.otherMs),
    stageMs: Object.fromEntries(STAGES.map((s) => [s, avg((c) => c.stageMs[s])])) as Record<CompactionStage, number>,
    usPerMessage: avg((c) => c.usPerMessage),
    cpuMs: avg((c) => c.cpuMs),
  };
}

const stageCells = (c: Compaction) => [fmt(c.loadMs), fmt(c.otherMs), ...STAGES.map((s) => fmt(c.stageMs[s]))];

export async function run(options: BenchOptions): Promise<BenchResult> {
  const sizes = sized(options, { smoke: [1_000], quick: [1_000, 10_000], full: [1_000, 10_000, 100_000] });
  const rounds = options.smoke ? 1 : ROUNDS;
  // A smoke run takes PGlite alone: each case is a process of its own, and the bench code is the same for both.
  const backends: CaseResult['backend'][] = options.databaseUrl && !options.smoke ? ['pglite', 'postgres'] : ['pglite'];
  const cases: CaseResult[] = [];
  for (const backend of backends) {
    for (const n of sizes) {
      options.log(`${backend}: ${fmt(n)} messages`);
      const measured = await runInChild<Omit<CaseResult, 'raw'>>(
        import.meta.url,
        [backend, String(n), String(rounds)],
        options,
        `overhead case ${backend} ${n}`,
      );
      const raw = await runInChild<RawLimit>(import.meta.url, ['raw', backend, String(n)], options, `overhead raw limit ${backend} ${n}`);
      const c: CaseResult = { ...measured, raw };
      options.log(
        `  append ${fmt(c.appendMs / 1000, 1)} s, compaction ${fmt(c.full.wallMs / 1000, 1)} s (raw limit ${fmt(raw.totalMs / 1000, 1)} s), +${NEW_MESSAGES} rounds ${c.rounds.map((r) => fmt(r.wallMs)).join(' / ')} ms, peak RSS ${fmt(c.peakRssMiB)} MiB`,
      );
      cases.push(c);
    }
  }

  const stageHeaders = ['>load', '>plan+other', ...STAGES.map((s) => `>${s}`)];
  const fresh = table(
    [
      'backend',
      '>messages',
      '>archived',
      '>append s',
      '>compact ms',
      ...stageHeaders,
      '>µs/msg',
      '>raw µs/msg',
      '>× raw',
      '>CPU ms',
      '>model calls',
      '>peak RSS MiB',
    ],
    cases.map((c) => [
      c.backend,
      fmt(c.messages),
      fmt(c.full.archived),
      fmt(c.appendMs / 1000, 1),
      fmt(c.full.wallMs),
      ...stageCells(c.full),
      fmt(c.full.usPerMessage),
      fmt(c.raw.usPerMessage),
      fmt(c.full.usPerMessage / c.raw.usPerMessage, 2),
      fmt(c.full.cpuMs),
      fmt(c.full.modelCalls),
      fmt(c.peakRssMiB),
    ]),
  );
  const rawTable = table(
    ['backend', '>messages', '>read ms', '>LanceDB append ms', '>delete ms', '>raw ms', '>raw µs/msg'],
    cases.map(({ raw }) => [raw.backend, fmt(raw.messages), fmt(raw.readMs), fmt(raw.appendMs), fmt(raw.deleteMs), fmt(raw.totalMs), fmt(raw.usPerMessage)]),
  );
  const incremental = table(
    ['backend', '>already archived', '>archived', '>mean ms', ...stageHeaders, '>µs/msg', '>median ms', '>max ms'],
    cases.map((c) => {
      const r = meanRound(c.rounds);
      return [
        c.backend,
        fmt(c.full.archived),
        fmt(r.archived),
        fmt(r.wallMs),
        ...stageCells(r),
        fmt(r.usPerMessage),
        fmt(median(c.rounds.map((x) => x.wallMs))),
        fmt(Math.max(...c.rounds.map((x) => x.wallMs))),
      ];
    }),
  );
  // Fixed cost per compaction and cost per message compacted: the line through the two smallest fresh cases, and how
  // far the largest lands from it (linearity).
  const fits = backends.map((backend) => {
    const own = cases.filter((c) => c.backend === backend);
    const [small, next] = own;
    const largest = own[own.length - 1]!;
    if (!small || !next) return undefined;
    const perMessageUs = ((next.full.wallMs - small.full.wallMs) * 1000) / (next.full.archived - small.full.archived);
    const fixedMs = small.full.wallMs - (perMessageUs * small.full.archived) / 1000;
    const predictedMs = fixedMs + (perMessageUs * largest.full.archived) / 1000;
    const beyond =
      largest === next
        ? ''
        : `; at ${fmt(largest.full.archived)} messages ${fmt(largest.full.wallMs)} ms against ${fmt(predictedMs)} ms on that line (${fmt((largest.full.wallMs / predictedMs - 1) * 100, 0)}%)`;
    return { backend, fixedMs, perMessageUs, predictedMs, text: `${backend}: ${fmt(fixedMs)} ms + ${fmt(perMessageUs, 1)} µs per message${beyond}` };
  });
  const growth = backends.map((backend) => {
    const own = cases.filter((c) => c.backend === backend);
    const first = meanRound(own[0]!.rounds);
    const last = meanRound(own[own.length - 1]!.rounds);
    return `${backend} ×${fmt(last.wallMs / first.wallMs, 2)} (archive stage ×${fmt(last.stageMs.archive / first.stageMs.archive, 2)})`;
  });

  const markdown = [
    `Instant in-process summarizer; real stores; default settings; forced compactions. Each case runs in its own process, after a warm-up compaction of a ${WARM_UP_MESSAGES}-message conversation in the same store. Stage times in ms: \`load\` reads the live history, \`plan+other\` is validation, planning, lock, reconcile and journal; \`clear\` is tier 2 (old tool outputs archived, then replaced by placeholders).`,
    '',
    `**(a) One compaction of a freshly appended conversation** (appended ${fmt(APPEND_BATCH)} messages per call):`,
    '',
    fresh,
    '',
    `The raw limit, measured in the same run, each case in a process of its own: the stores alone on as many fresh rows (appended through memfold, untimed), with no memfold code between: the live rows read back, their text appended to a LanceDB table as rows, the rows deleted by id (\`overhead-raw.ts\`). \`× raw\` above is µs/msg over raw µs/msg.`,
    '',
    rawTable,
    '',
    `Per compaction, the line through the ${fmt(sizes[0]!)} and ${fmt(sizes[1]!)} cases: ${fits.flatMap((f) => (f ? [f.text] : [])).join('; ')}.`,
    '',
    `**(b) ${NEW_MESSAGES} new messages appended and compacted, ${rounds} rounds, after the conversation was compacted down** (means per round; index maintenance runs every few rounds, hence median and max):`,
    '',
    incremental,
    '',
    `(b) growth of the mean round from ${fmt(cases[0]!.full.archived)} to ${fmt(cases[cases.length - 1]!.full.archived)} messages already archived: ${growth.join('; ')}.`,
  ].join('\n');
  return {
    name: 'overhead',
    title: 'Overhead: memfold with an instant summarizer',
    markdown,
    json: { appendBatch: APPEND_BATCH, newMessages: NEW_MESSAGES, rounds, warmUpMessages: WARM_UP_MESSAGES, fits, cases },
  };
}

// A case in its own process: `<this file> <backend> <messages> <rounds>`, the result as JSON on the last line of stdout.
// `<this file> raw <backend> <messages>` measures the raw limit instead (`overhead-raw.ts`).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const databaseUrl = process.env.MEMFOLD_BENCH_DATABASE_URL || undefined;
  const [first, second, third] = process.argv.slice(2);
  const measured: Promise<unknown> =
    first === 'raw'
      ? runRawLimit(second as CaseResult['backend'], Number(third), databaseUrl)
      : runCase(first as CaseResult['backend'], Number(second), Number(third), databaseUrl);
  measured
    .then((result) => console.log(JSON.stringify(result)))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
