/**
 * Extractive summary quality on LoCoMo, in seconds: every session of the ten conversations is summarized at
 * 1/3.5 of its tokens (chars/4), alone and chained (`previousSummary` = the previous session's summary, as
 * compaction passes it). Each question (category 5, adversarial, left out) is scored by answer-token retention
 * (`src/eval/answer-tokens.ts`) against the summaries of the sessions its evidence lies in, and against LoCoMo's
 * own `session_N_summary` of those sessions as a reference. Compression is input chars / output chars.
 *
 * `npx tsx test/bench/extractive-quality.ts` prints the table; `... --show 0:1 [--chained]` prints one summary
 * (conversation index from 0, session number from 1).
 */
import { pathToFileURL } from 'node:url';
import { figures, RATIO, summarizeSessions, type Figures } from '../summarizer/locomo-retention.js';
import { fmt, now, table, type BenchOptions, type BenchResult } from './bench-kit.js';

const ALL = Array.from({ length: 10 }, (_, i) => i);

export async function run(options: BenchOptions): Promise<BenchResult> {
  const rows: Array<Array<string | number>> = [];
  const json: Record<string, Figures & { seconds: number }> = {};
  const categories = (f: Figures) => ['1', '2', '3', '4'].map((k) => fmt(f.byCategory[k], 3));
  for (const chained of [false, true]) {
    const t0 = now();
    const f = figures(options.smoke ? [0] : ALL, chained);
    const seconds = (now() - t0) / 1000;
    const name = chained ? 'chained' : 'alone';
    json[name] = { ...f, seconds };
    options.log(`${name}: retention ${fmt(f.retention, 3)} at ${fmt(f.compression, 2)}x (${fmt(seconds, 1)} s)`);
    rows.push([`extractive, ${name}`, fmt(f.retention, 3), `${fmt(f.compression, 2)}x`, ...categories(f)]);
    if (!chained) rows.push(['LoCoMo session_summary (reference)', fmt(f.reference, 3), `${fmt(f.referenceCompression, 2)}x`, '', '', '', '']);
  }
  const alone = json.alone!;
  const markdown = [
    table(['summary', '>answer-token retention', '>compression', '>multi-hop', '>temporal', '>open-domain', '>single-hop'], rows),
    '',
    `${alone.sessions} sessions, ${alone.questions} questions (category 5 left out), each scored against the summaries of the sessions holding its evidence; budget: session tokens (chars/4) / ${RATIO}. Skipped: ${alone.skippedEvidence} malformed evidence ids, ${alone.noEvidence} questions without usable evidence.`,
  ].join('\n');
  return { name: 'extractive-quality', title: 'Extractive summary quality on LoCoMo', markdown, json };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const show = /^(\d+):(\d+)$/.exec(process.argv[process.argv.indexOf('--show') + 1] ?? '');
  if (show) {
    console.log(summarizeSessions(Number(show[1]), process.argv.includes('--chained')).summaries.get(Number(show[2])));
  } else {
    run({ quick: true, outDir: '', log: (line) => console.log(`  ${line}`) })
      .then((result) => console.log(`\n${result.markdown}`))
      .catch((error: unknown) => {
        console.error(error);
        process.exitCode = 1;
      });
  }
}
