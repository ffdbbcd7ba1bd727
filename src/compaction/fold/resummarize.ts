/**
 * Step 6: fold runs of frontier batches into batches of the next depth. The higher batches are written
 * and read back before their children are marked; the children stay readable and searchable.
 */
import type { ArchiveEntry, SummaryBatch } from '../../conversation/types.js';
import type { CompactionSettings } from '../compaction-settings.js';
import type { Archive } from '../../archive/archive.js';
import type { ArchiveWriter } from '../batches/archive-writer.js';
import { baseLabels, buildBatches, childSessions, childTimes } from '../batches/batch-builder.js';
import { byTime } from '../view/clip-archive.js';
import { batchFilesFooter, unionFilesFooters, withFilesFooter, withoutFilesFooter, type FilesFooter } from '../footer/files-footer.js';
import { foldSummaries, type FoldOptions, type FoldStep } from './fold.js';
import { pickResummarizeRun, replaceRun } from '../plan/frontier.js';

export interface ResummarizeContext {
  conversationId: string;
  operationId: string;
  settings: CompactionSettings;
  archive: Archive;
  writer: ArchiveWriter;
  fold: FoldOptions;
  /** Tokens one summarizer request may carry for its transcript part. */
  inputBudget: number;
  onFold?: (depth: number, steps: FoldStep[]) => void;
}

/** A run folded into its parent, which is not written yet (`writeFolded` writes it, then marks the run under it). */
export interface FoldedRun {
  run: readonly ArchiveEntry[];
  parent: SummaryBatch;
  /** The parent's label was found free in the archive (its first form, which no other archive row holds). */
  labelFree: boolean;
}

/**
 * Fold one run of same-depth batches into a single batch of depth + 1, write it, then mark the run. Children that
 * fit one batch's budget together are joined as they are, without a model call: a summary of them could only be
 * a paraphrase of the same length, and would cost a request.
 */
export async function foldRun(run: readonly ArchiveEntry[], ctx: ResummarizeContext): Promise<SummaryBatch> {
  const folded = await summarizeRun(run, ctx);
  await writeFolded([folded], ctx);
  return folded.parent;
}

/**
 * The parent of `run`, summarized and labelled but not written. `pending` holds labels of parents folded before it and
 * not written yet: a label is never given twice.
 */
export async function summarizeRun(run: readonly ArchiveEntry[], ctx: ResummarizeContext, pending: ReadonlySet<string> = new Set()): Promise<FoldedRun> {
  const depth = run[0]!.depth + 1;
  // The summarizer reads the children as stored (header line included), in time order; a join keeps them so too.
  const children = run.map((c) => c.content);
  // The parent's footer is the union of its children's, whatever the summary of them says.
  const files = ctx.settings.filesFooter ? unionFilesFooters(run.map((c) => batchFilesFooter(c.content))) : undefined;
  const joined = joinedChildren(children, ctx.fold, files);
  // The summarizer reads the children without their footers: the union is appended anyway, and an echo would be cut.
  const steps = joined === undefined ? [await foldSummaries(files ? children.map(withoutFilesFooter) : children, ctx.fold)] : [];
  ctx.onFold?.(depth, steps);
  const summary = joined ?? (files ? withFilesFooter(steps[0]!.text, files, ctx.fold.maxSummaryTokens, (t) => ctx.fold.tokens.count(t)) : steps[0]!.text);
  const draft = { depth, summary, sourceTimes: childTimes(run), sourceIds: run.map((c) => c.label), sessions: childSessions(run) };
  const [base] = baseLabels([draft]);
  const existing = await ctx.archive.read(ctx.conversationId, [base!]);
  const [parent] = buildBatches(ctx.conversationId, ctx.operationId, [draft], new Set([...existing.map((e) => e.label), ...ctx.writer.written, ...pending]));
  // A base label found stored (or taken by this operation) gives a longer one, which was not looked up itself.
  return { run, parent: parent!, labelFree: parent!.label === base };
}

/**
 * Write the parents of `folded` in one archive write (read back before anything is marked), then mark each run under
 * its parent in one call: a parent's children may be parents of the same group, written by then.
 */
export async function writeFolded(folded: readonly FoldedRun[], ctx: Pick<ResummarizeContext, 'writer'>): Promise<void> {
  if (folded.length === 0) return;
  await ctx.writer.writeVerified(
    folded.map((f) => f.parent),
    folded.every((f) => f.labelFree) ? { labelsFree: true } : {},
  );
  await ctx.writer.markEach(folded.flatMap(({ run, parent }) => run.map((child) => ({ label: child.label, parentLabel: parent.label }))));
}

/**
 * The children's texts as one batch body, when they fit `maxSummaryTokens` together; else undefined. With `files`,
 * their footers give way to one footer, the union, at the end (uncut: a join that needs cutting is summarized instead).
 */
export function joinedChildren(children: readonly string[], fold: Pick<FoldOptions, 'tokens' | 'maxSummaryTokens'>, files?: FilesFooter): string | undefined {
  const count = (t: string) => fold.tokens.count(t);
  if (files === undefined) {
    const joined = children.join('\n');
    return count(joined) <= fold.maxSummaryTokens ? joined : undefined;
  }
  const joined = children.map(withoutFilesFooter).join('\n');
  if (count(joined) > fold.maxSummaryTokens) return undefined;
  const body = withFilesFooter(joined, files, fold.maxSummaryTokens, count);
  return body.startsWith(joined) ? body : undefined;
}

/**
 * Whether a run fits one request: its children's tokens plus separators within the input budget. Each child is counted
 * once (by label): counting the joined text for every candidate length would be quadratic with an exact tokenizer.
 */
export function runFits(ctx: { fold: Pick<FoldOptions, 'tokens'>; inputBudget: number }): (run: readonly ArchiveEntry[]) => boolean {
  const counted = new Map<string, number>();
  const cost = (child: ArchiveEntry) => counted.get(child.label) ?? counted.set(child.label, ctx.fold.tokens.count(child.content)).get(child.label)!;
  return (run) => run.reduce((sum, child) => sum + cost(child) + 1, 0) <= ctx.inputBudget;
}

/**
 * The first run `resummarizeFrontier` will fold, known before the frontier is complete: `frontier` has its final
 * shape (depths, times, labels) but only the `ready` batches have their text. The run is decided when it and every
 * length tried before it (longer ones, by `fits`) involve ready batches only; else undefined (wait for more).
 */
export function decidedFirstRun(
  frontier: readonly ArchiveEntry[],
  ready: (batch: ArchiveEntry) => boolean,
  ctx: { fold: Pick<FoldOptions, 'tokens'>; inputBudget: number; settings: Pick<CompactionSettings, 'clipFirst' | 'clipLast' | 'clipBuffer'> },
  // Only ready batches (whose text is final) are ever measured, so one `runFits` may serve every call of a compaction.
  fits: (run: readonly ArchiveEntry[]) => boolean = runFits(ctx),
): ArchiveEntry[] | undefined {
  let undecided = false;
  const run = pickResummarizeRun(frontier, ctx.settings, (candidate) => {
    const firstPending = candidate.findIndex((batch) => !ready(batch));
    if (firstPending < 0) return fits(candidate);
    // Costs only add up: a run whose ready opening is already too long is too long whatever the rest says.
    if (!fits(candidate.slice(0, firstPending))) return false;
    undecided = true;
    return false;
  });
  return run && !undecided && run.every(ready) ? run : undefined;
}

/**
 * Re-summarize until the frontier is within clipFirst + clipLast + clipBuffer (or no run qualifies). `folded` is a
 * first run already folded (early, beside the fold: `early-resummarize.ts`), counted in `created`.
 */
export async function resummarizeFrontier(
  frontier: readonly ArchiveEntry[],
  ctx: ResummarizeContext,
  folded?: { run: readonly ArchiveEntry[]; parent: SummaryBatch },
): Promise<{ frontier: ArchiveEntry[]; created: SummaryBatch[] }> {
  let current = [...frontier].sort(byTime);
  const created: SummaryBatch[] = [];
  if (folded) {
    created.push(folded.parent);
    current = replaceRun(current, folded.run, folded.parent);
  }
  const fits = runFits(ctx);
  // Every run is summarized first, then the parents are written together: one write, read-back and mark for the
  // step instead of one each per run, none of them between two model calls.
  const folds: FoldedRun[] = [];
  const pending = new Set<string>();
  for (let run = pickResummarizeRun(current, ctx.settings, fits); run; run = pickResummarizeRun(current, ctx.settings, fits)) {
    const fold = await summarizeRun(run, ctx, pending);
    folds.push(fold);
    pending.add(fold.parent.label);
    created.push(fold.parent);
    current = replaceRun(current, run, fold.parent);
  }
  await writeFolded(folds, ctx);
  return { frontier: current, created };
}
