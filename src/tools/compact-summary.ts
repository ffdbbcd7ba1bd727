/**
 * The summary a compaction wrote, for the compact tool's answer, pure: the agent that asked for the compaction reads
 * what now stands for the archived messages, without a memory_read call. Bounded, since the answer enters the context
 * the compaction just freed.
 */
import type { SummaryBatch } from '../conversation/types.js';

/** Characters of summary text the compact tool's answer carries at most (about 1,000 tokens). */
export const MAX_COMPACT_SUMMARY_CHARS = 4_000;

/**
 * The depth-0 batches' text (header line and summary), oldest first, within `maxChars`. The newest batches are kept
 * when they do not all fit (they run up to the messages still in the context); a batch cut at the bound ends with `…`,
 * and the batches left out are named by label, so memory_read can read them whole.
 */
export function compactionSummaryText(batches: readonly SummaryBatch[], maxChars = MAX_COMPACT_SUMMARY_CHARS): string {
  const shown: string[] = [];
  let left = maxChars;
  let index = batches.length - 1;
  for (; index >= 0 && left > 0; index--) {
    const text = batches[index]!.content.trim();
    if (text.length <= left) {
      shown.unshift(text);
      left -= text.length;
    } else {
      shown.unshift(`${text.slice(0, left).trimEnd()}… (cut; memory_read with label ${batches[index]!.label} reads it whole)`);
      left = 0;
    }
  }
  const omitted = batches.slice(0, index + 1).map((batch) => batch.label);
  if (omitted.length > 0) {
    // The first and last label bound the list, however many were left out.
    const named = omitted.length <= 2 ? omitted.join(', ') : `${omitted[0]} to ${omitted.at(-1)}`;
    shown.unshift(`(${omitted.length} earlier ${omitted.length === 1 ? 'batch' : 'batches'} not shown: ${named})`);
  }
  return shown.join('\n\n');
}
