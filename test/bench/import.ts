/**
 * `memfold import` of one long conversation: a JSONL file of 100k and 1M lines (the synthetic
 * conversation: prose, tool calls and JSON results; no ids, so every line gets a derived id), imported
 * into a fresh store, then imported again (every line already there, nothing appended). Times of the
 * check pass (read, validate, ask the store which ids are used) and the write pass (read again,
 * append 1,000 messages per call in one transaction), lines per second, and the peak RSS of the
 * case's own process. PGlite, and PostgreSQL when DATABASE_URL is set.
 */
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { checkImportFile } from '../../src/cli/commands/import-check.js';
import { writeImport } from '../../src/cli/commands/import-write.js';
import { createMemfold } from '../../src/memfold.js';
import {
  createBenchDatabase,
  fmt,
  maxRssMiB,
  now,
  syntheticMessage,
  sized,
  table,
  tempDir,
  tempHome,
  runInChild,
  type BenchOptions,
  type BenchResult,
} from './bench-kit.js';

const CONVERSATION = 'bench-import';

interface Pass {
  checkMs: number;
  writeMs: number;
  appended: number;
  skipped: number;
}

interface CaseResult {
  backend: 'pglite' | 'postgres';
  lines: number;
  fileMiB: number;
  first: Pass;
  again: Pass;
  peakRssMiB: number;
}

/** The synthetic conversation as an import file, one message a line, written as a stream. */
async function writeFile(file: string, lines: number): Promise<void> {
  const out = createWriteStream(file);
  for (let k = 0; k < lines; k++) {
    const { createdAt, toolCalls, toolCallId, ...rest } = syntheticMessage(k);
    const line = JSON.stringify({
      conversation_id: CONVERSATION,
      ...rest,
      ...(toolCalls ? { tool_calls: toolCalls } : {}),
      ...(toolCallId ? { tool_call_id: toolCallId } : {}),
      created_at: createdAt,
    });
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** One case, in this process (see `runInChild`): the file is there already. */
async function runCase(backend: CaseResult['backend'], file: string, lines: number, databaseUrl: string | undefined): Promise<CaseResult> {
  const home = await tempHome(`import-${backend}`);
  const database = backend === 'postgres' ? await createBenchDatabase(databaseUrl!) : undefined;
  try {
    const memfold = await createMemfold({ env: {}, config: { home: home.dir, ...(database ? { databaseUrl: database.url } : {}) } });
    try {
      const importOnce = async (): Promise<Pass> => {
        const t0 = now();
        const plan = await checkImportFile(memfold, file);
        const t1 = now();
        const appended = await writeImport(memfold, file, plan);
        const counts = plan.conversations.get(CONVERSATION)!;
        return { checkMs: t1 - t0, writeMs: now() - t1, appended: appended.get(CONVERSATION) ?? 0, skipped: counts.skip };
      };
      const first = await importOnce();
      const again = await importOnce();
      if (first.appended !== lines || again.appended !== 0 || again.skipped !== lines)
        throw new Error(`unexpected counts: ${JSON.stringify({ first, again })}`);
      return { backend, lines, fileMiB: (await stat(file)).size / 2 ** 20, first, again, peakRssMiB: maxRssMiB() };
    } finally {
      await memfold.close();
    }
  } finally {
    await database?.drop();
    await home.remove();
  }
}

const perSecond = (lines: number, ms: number) => fmt(lines / (ms / 1000));

export async function run(options: BenchOptions): Promise<BenchResult> {
  const sizes = sized(options, { smoke: [1_000], quick: [10_000, 100_000], full: [100_000, 1_000_000] });
  // A smoke run takes PGlite alone: each case is a process of its own, and the bench code is the same for both.
  const backends: CaseResult['backend'][] = options.databaseUrl && !options.smoke ? ['pglite', 'postgres'] : ['pglite'];
  const files = await tempDir('import-files');
  const cases: CaseResult[] = [];
  try {
    for (const lines of sizes) {
      const file = path.join(files.dir, `${lines}.jsonl`);
      await writeFile(file, lines);
      for (const backend of backends) {
        options.log(`${backend}: ${fmt(lines)} lines`);
        const c = await runInChild<CaseResult>(import.meta.url, [backend, file, String(lines)], options, `import case ${backend} ${lines}`);
        const total = c.first.checkMs + c.first.writeMs;
        options.log(
          `  import ${fmt(total / 1000, 1)} s (${perSecond(lines, total)} lines/s), again ${fmt((c.again.checkMs + c.again.writeMs) / 1000, 1)} s, peak RSS ${fmt(c.peakRssMiB)} MiB`,
        );
        cases.push(c);
      }
    }
  } finally {
    await files.remove();
  }

  const markdown = [
    'One conversation, the synthetic messages of the other benchmarks (prose, tool calls, JSON results), no ids in the file (each line gets a derived id). "import": into a fresh store; "again": the same file a second time, every line found already imported. Each case runs in its own process; peak RSS covers both runs.',
    '',
    table(
      ['backend', '>lines', '>file MiB', '>check s', '>write s', '>import s', '>lines/s', '>again s', '>again lines/s', '>peak RSS MiB'],
      cases.map((c) => {
        const total = c.first.checkMs + c.first.writeMs;
        const again = c.again.checkMs + c.again.writeMs;
        return [
          c.backend,
          fmt(c.lines),
          fmt(c.fileMiB),
          fmt(c.first.checkMs / 1000, 1),
          fmt(c.first.writeMs / 1000, 1),
          fmt(total / 1000, 1),
          perSecond(c.lines, total),
          fmt(again / 1000, 1),
          perSecond(c.lines, again),
          fmt(c.peakRssMiB),
        ];
      }),
    ),
  ].join('\n');
  return { name: 'import', title: 'Import: a JSONL conversation of 100k and 1M lines', markdown, json: { conversation: CONVERSATION, cases } };
}

// A case in its own process: `<this file> <backend> <file> <lines>`, the result as JSON on the last line of stdout.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [backend, file, lines] = process.argv.slice(2);
  runCase(backend as CaseResult['backend'], file!, Number(lines), process.env.MEMFOLD_BENCH_DATABASE_URL || undefined)
    .then((result) => console.log(JSON.stringify(result)))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
