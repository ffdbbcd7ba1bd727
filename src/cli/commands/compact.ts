/** `memfold compact <conversation>`: compact now, report what happened, and why when nothing did. */
import type { CompactionResult } from '../../compaction/compaction-result.js';
import { LOOP_GUARD_LIMIT } from '../../compaction/compactor.js';
import type { CompactionSettings } from '../../compaction/compaction-settings.js';
import type { Memfold } from '../../memfold.js';
import type { CompactionProgress } from '../compaction-progress.js';
import { printJson, type Output } from '../output.js';

export interface CompactCommandOptions {
  force: boolean;
  json: boolean;
  /** Draws the stages and the summarizing bar; the caller wires it to createMemfold's onEvent. */
  progress?: CompactionProgress;
}

export async function runCompact(memfold: Memfold, conversationId: string, options: CompactCommandOptions, output: Output): Promise<number> {
  let result: CompactionResult;
  try {
    result = await memfold.compact(conversationId, { force: options.force, wait: true });
  } finally {
    options.progress?.finish();
  }
  if (options.json) printJson(output, { ...result, history: undefined });
  else if (result.status === 'compacted') output.out(describeCompacted(result));
  else if (result.status === 'failed') output.err(`failed (${result.failureCode}): ${result.error}`);
  else output.out(`skipped: ${describeSkip(result, memfold.compactor.settingsOf(conversationId), conversationId)}`);
  return result.status === 'failed' ? 1 : 0;
}

/** What a compaction did, naming the tier that resolved it. */
export function describeCompacted(result: CompactionResult): string {
  const tokens = `tokens ${result.tokensBefore} -> ${result.tokensAfter}`;
  const cleared = `${result.toolOutputsCleared} old tool outputs cleared (archived verbatim; placeholders naming their labels in the context, ${result.tokensFreedByClearing} tokens freed)`;
  if (result.tier === 2) {
    const failed = result.failureCode ? `; summarizing then failed (${result.failureCode}): ${result.error}` : '; no summary needed';
    return `compacted by tier 2: ${cleared}; ${tokens}${failed}`;
  }
  const fallbacks = result.fallbacks.length ? `; fallbacks: ${result.fallbacks.map((f) => f.reason).join(', ')}` : '';
  const first = result.toolOutputsCleared > 0 ? ` after tier 2: ${cleared}` : '';
  return `compacted by tier 3: ${result.archivedMessages} messages archived in ${result.batches.length} batches (+${result.resummarized.length} re-summarized)${first}; ${tokens}${fallbacks}`;
}

/** Why a compaction did nothing, in the settings' own terms, and whether `--force` would change it. */
export function describeSkip(result: CompactionResult, settings: CompactionSettings, conversationId: string): string {
  const size = `${result.messagesBefore} messages, ${result.tokensBefore} tokens`;
  switch (result.skipReason) {
    case 'below_trigger':
      return `below the trigger (${size}; compaction starts at ${settings.trigger} tokens; --force compacts anyway)`;
    case 'nothing_to_compact':
      if (result.messagesBefore === 0) return `nothing to compact: conversation ${conversationId} has no messages`;
      return (
        `nothing to compact (${size}): every message is kept verbatim, as the system prompt, the clip-archive, ` +
        `the opening turns (keepFirstTurns ${settings.keepFirstTurns}) or the recent tail ` +
        `(keepRecentMessages ${settings.keepRecentMessages}, keepRecentTokens ${settings.keepRecentTokens}); ` +
        'nothing lies between them to summarize, with or without --force'
      );
    case 'too_little_to_free':
      return (
        `too little to free (${size}): compacting now would free fewer than minFreedTokens (${settings.minFreedTokens}) ` +
        `of the ${settings.trigger}-token trigger, so the next compaction would come right after it; --force compacts anyway`
      );
    case 'busy':
      return `another compaction of conversation ${conversationId} is running (${size}); try again when it ends`;
    case 'paused':
      return (
        `automatic compaction is paused: ${LOOP_GUARD_LIMIT} compactions in a row left the context at or over the trigger (${size}); ` +
        `the pause is kept in the store for every process until \`memfold resume ${conversationId}\` or a compaction under the trigger lifts it; --force compacts anyway`
      );
    default:
      return `${String(result.skipReason)} (${size})`;
  }
}
