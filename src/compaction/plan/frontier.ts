/**
 * Step 6 planning, pure: which frontier batches to re-summarize into one batch of the next depth.
 *
 * When the frontier holds more than clipFirst + clipLast + clipBuffer batches, the newest clipLast
 * stay as they are; among the older ones, the oldest run of consecutive batches of the lowest depth
 * (at least two) is folded into one batch of depth + 1. Repeating this keeps the frontier small and
 * roughly logarithmic in depth, like a log-structured merge.
 */
import type { ArchiveEntry } from '../../conversation/types.js';
import type { CompactionSettings } from '../compaction-settings.js';
import { byTime } from '../view/clip-archive.js';

type Settings = Pick<CompactionSettings, 'clipFirst' | 'clipLast' | 'clipBuffer'>;

/** The frontier after `run` was folded into `parent`, in time order. */
export function replaceRun(frontier: readonly ArchiveEntry[], run: readonly ArchiveEntry[], parent: ArchiveEntry): ArchiveEntry[] {
  const folded = new Set(run.map((b) => b.label));
  return [...frontier.filter((b) => !folded.has(b.label)), parent].sort(byTime);
}

export function needsResummarize(frontierSize: number, settings: Settings): boolean {
  return frontierSize > settings.clipFirst + settings.clipLast + settings.clipBuffer;
}

/**
 * The run to fold next, or undefined when none qualifies. `fits` limits the run (by the summarizer's
 * input budget): the run is the longest prefix of at least two batches that fits.
 */
export function pickResummarizeRun(
  frontier: readonly ArchiveEntry[],
  settings: Settings,
  fits: (run: readonly ArchiveEntry[]) => boolean = () => true,
): ArchiveEntry[] | undefined {
  if (!needsResummarize(frontier.length, settings)) return undefined;
  const sorted = [...frontier].sort(byTime);
  const candidates = sorted.slice(0, sorted.length - settings.clipLast);
  const runs: ArchiveEntry[][] = [];
  for (const batch of candidates) {
    const last = runs[runs.length - 1];
    if (last && last[0]!.depth === batch.depth) last.push(batch);
    else runs.push([batch]);
  }
  const eligible = runs.filter((run) => run.length >= 2);
  if (eligible.length === 0) return undefined;
  const lowest = Math.min(...eligible.map((run) => run[0]!.depth));
  const run = eligible.find((r) => r[0]!.depth === lowest)!;
  let length = run.length;
  while (length > 2 && !fits(run.slice(0, length))) length--;
  return run.slice(0, length);
}
