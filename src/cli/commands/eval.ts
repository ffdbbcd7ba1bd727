/**
 * `memfold eval <file> --dataset locomo|longmemeval|jsonl|tau-bench|swe-agent`: replays a dataset into a fresh store at each
 * window and prints how much of what the questions need survives, for memfold and the baselines.
 */
import type { CompactionSettings, SessionScope } from '../../compaction/compaction-settings.js';
import { InvalidArgumentError } from '../../errors.js';
import { DEFAULT_OUT_DIR, DEFAULT_WINDOWS, evaluate, parseWindows, type DatasetKind } from '../../eval/evaluate.js';
import type { ParsedCommand } from '../args.js';
import { printJson, type Output } from '../output.js';
import { answerAccuracyOf } from './eval-answer.js';
import { createProgressBar, type ProgressBar } from '../progress.js';

function windowsOf(flags: ParsedCommand['flags']): number[] {
  if (flags.window !== undefined && flags.windows !== undefined) throw new InvalidArgumentError('--window', 'cannot be combined with --windows');
  if (typeof flags.window === 'number') return parseWindows(String(flags.window), '--window');
  if (typeof flags.windows === 'string') return parseWindows(flags.windows);
  return [...DEFAULT_WINDOWS];
}

/** `--session-scope` and `--keep-sessions` as compaction settings (`--keep-sessions` is fixedCount's). */
function compactionOf(flags: ParsedCommand['flags']): { compaction?: Partial<CompactionSettings> } {
  const compaction: Partial<CompactionSettings> = {};
  if (typeof flags['session-scope'] === 'string') compaction.sessionScope = flags['session-scope'] as SessionScope;
  if (typeof flags['keep-sessions'] === 'number') {
    if (compaction.sessionScope !== 'fixedCount') throw new InvalidArgumentError('--keep-sessions', 'needs --session-scope fixedCount');
    compaction.keepSessions = flags['keep-sessions'];
  }
  return Object.keys(compaction).length > 0 ? { compaction } : {};
}

export async function runEval(parsed: ParsedCommand, output: Output): Promise<number> {
  const { flags } = parsed;
  // --dataset and --conversations are checked by their flag schemas (args.ts).
  const dataset = flags.dataset as DatasetKind;
  const windows = windowsOf(flags);
  const answerAccuracy = answerAccuracyOf(flags);
  let bar: ProgressBar | undefined;
  const { result, markdown, files, guaranteesHeld } = await evaluate({
    dataset,
    file: parsed.positionals.file!,
    windows,
    outDir: typeof flags.out === 'string' ? flags.out : DEFAULT_OUT_DIR,
    ...(typeof flags.questions === 'string' ? { questions: flags.questions } : {}),
    ...(typeof flags.conversations === 'number' ? { conversations: flags.conversations } : {}),
    ...(typeof flags.home === 'string' ? { home: flags.home } : {}),
    ...(typeof flags.namespace === 'string' ? { namespace: flags.namespace } : {}),
    ...compactionOf(flags),
    ...(answerAccuracy ? { answerAccuracy } : {}),
    // Drawn where the output says progress goes (stderr for the bin), and nowhere without it.
    ...(output.progress
      ? {
          onProgress: (done: number, total: number, note: string) => {
            bar ??= createProgressBar('eval', total, output.progress);
            bar.update(done, note);
          },
        }
      : {}),
  });
  bar?.finish('done');
  if (flags.json === true) {
    printJson(output, { files, ...result, results: result.results.map(({ outcomes: _outcomes, ...rest }) => rest) });
  } else {
    output.out(markdown);
    output.out(`\nwrote ${files.json}, ${files.markdown}, ${files.svg}`);
  }
  if (!guaranteesHeld) output.err('memfold eval: a guarantee failed (a message lost, or a tool call split from its result): see the cost table');
  return guaranteesHeld ? 0 : 1;
}
