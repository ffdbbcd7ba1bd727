/**
 * `memfold import <file.jsonl>`: check the whole file (`import-check.ts`), then append what it kept
 * (`import-write.ts`). A failing file writes nothing; importing the same file again appends nothing;
 * a file extended with new lines appends only those. Long files show progress on `output.progress`
 * (stderr for the bin; none without it).
 */
import { stat } from 'node:fs/promises';
import type { Memfold } from '../../memfold.js';
import { printJson, type Output } from '../output.js';
import { createProgressBar, type ProgressBar } from '../progress.js';
import { checkImportFile } from './import-check.js';
import { writeImport } from './import-write.js';

export interface ImportOptions {
  /** Conversation of lines that name none. */
  conversation?: string;
  json: boolean;
}

/** Files of more lines than this show progress bars. */
const PROGRESS_FROM_LINES = 10_000;
/** Lines between two redraws of a bar. */
const REDRAW_EVERY = 1_000;
const MiB = 1024 * 1024;

/** A conversation id as one visible word, else as a JSON string (an id with a line break cannot add lines). */
function shown(id: string): string {
  return /^[\p{L}\p{N}_.:@/-]+$/u.test(id) ? id : JSON.stringify(id);
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

export async function runImport(memfold: Memfold, file: string, options: ImportOptions, output: Output): Promise<number> {
  const fallback = options.conversation;
  const bytes = (await stat(file).catch(() => undefined))?.size ?? 0;
  const stream = output.progress;
  // The check pass draws the share of the file read: its line count is not known before the end.
  const size = `% of ${(bytes / MiB).toFixed(1)} MiB`;
  let checking: ProgressBar | undefined;
  let linesRead = 0;
  const onBytes = (read: number) => {
    if (stream === undefined || ++linesRead <= PROGRESS_FROM_LINES || linesRead % REDRAW_EVERY !== 0) return;
    checking ??= createProgressBar('checking', 100, stream);
    checking.update(bytes === 0 ? 0 : Math.min(100, Math.floor((read * 100) / bytes)), size);
  };
  const plan = await checkImportFile(memfold, file, { onBytes, ...(fallback !== undefined ? { fallback } : {}) });
  checking?.finish(size);

  const toAppend = [...plan.conversations.values()].reduce((sum, c) => sum + c.append, 0);
  const writing = stream !== undefined && plan.lines > PROGRESS_FROM_LINES && toAppend > 0 ? createProgressBar('importing', toAppend, stream) : undefined;
  const appended = await writeImport(memfold, file, plan, {
    ...(fallback !== undefined ? { fallback } : {}),
    ...(writing ? { onAppended: (done: number) => writing.update(done) } : {}),
  });
  writing?.finish();

  const ids = [...plan.conversations.keys()];
  if (options.json) {
    printJson(output, {
      imported: Object.fromEntries(ids.map((id) => [id, appended.get(id) ?? 0])),
      skipped: Object.fromEntries(ids.map((id) => [id, plan.conversations.get(id)!.skip])),
    });
  } else if (ids.length === 0) output.out('0 messages');
  else {
    for (const id of ids)
      output.out(`${shown(id)}: ${count(appended.get(id) ?? 0, 'message')} appended, ${plan.conversations.get(id)!.skip} skipped (already imported)`);
  }
  return 0;
}
