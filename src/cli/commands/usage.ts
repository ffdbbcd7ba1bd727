/** `memfold usage <conversation>` and `memfold resume <conversation>`: the context against the settings, and the loop guard's pause. */
import type { ContextUsage, NextCompaction } from '../../compaction/compactor.js';
import type { CompactionSettings } from '../../compaction/compaction-settings.js';
import type { Memfold } from '../../memfold.js';
import { printJson, printStored, type Output } from '../output.js';

/** What the next `compact` would do, in the settings' own terms. */
export function describeNext(next: NextCompaction, settings: CompactionSettings, conversationId: string): string {
  switch (next) {
    case 'none':
      return 'none: below the trigger, compact does nothing (--force compacts anyway)';
    case 'clear_tool_outputs':
      return `clear tool outputs: over the trigger, clearing old tool outputs (archived verbatim, placeholders in the context) brings it to ${settings.targetTokens} tokens or less, with no summary`;
    case 'compact':
      return `compact: over the trigger, compaction runs and brings the context down to about ${settings.targetTokens} tokens`;
    case 'too_little_to_free':
      return `skip (too little to free): compacting now would free fewer than minFreedTokens (${settings.minFreedTokens}); --force compacts anyway`;
    case 'nothing_to_compact':
      return 'skip (nothing to compact): every message is kept verbatim, in the opening turns or the recent tail';
    case 'paused':
      return `skip (paused): the loop guard paused automatic compaction; \`memfold resume ${conversationId}\` lifts it, --force compacts anyway`;
  }
}

export function formatUsage(usage: ContextUsage, settings: CompactionSettings): string {
  const share = (tokens: number) => `${((tokens / usage.contextWindow) * 100).toFixed(0)}%`;
  const calibration = usage.calibration === 1 ? '' : `, memfold's count × ${usage.calibration.toFixed(3)} as the assistant's reported usage calibrated it`;
  return [
    `conversation ${usage.conversationId}: ${usage.tokens} tokens of a ${usage.contextWindow}-token window (${usage.percent.toFixed(1)}%${calibration})`,
    `trigger ${usage.trigger} (${share(usage.trigger)}), target ${usage.targetTokens} (${share(usage.targetTokens)}), warning at ${usage.warnTokens} (${share(usage.warnTokens)})`,
    `next compaction: ${describeNext(usage.next, settings, usage.conversationId)}`,
  ].join('\n');
}

export async function runUsage(memfold: Memfold, conversationId: string, options: { json: boolean }, output: Output): Promise<number> {
  const usage = await memfold.usage(conversationId);
  if (options.json) printJson(output, usage);
  else printStored(output, formatUsage(usage, memfold.compactor.settingsOf(conversationId)));
  return 0;
}

/**
 * Clears the stored record whatever trigger it was counted against (the command's `--window` need not be the
 * application's), and says what it cleared.
 */
export async function runResume(memfold: Memfold, conversationId: string, options: { json: boolean }, output: Output): Promise<number> {
  const state = await memfold.persistence.getLoopGuardState(conversationId);
  await memfold.compactor.resume(conversationId);
  if (options.json) printJson(output, { conversationId, cleared: state ?? null });
  else if (state?.pausedAt !== undefined) {
    printStored(
      output,
      `resumed: automatic compaction of conversation ${conversationId} runs again (paused since ${state.pausedAt}, trigger ${state.trigger} tokens)`,
    );
  } else if (state !== undefined) printStored(output, `conversation ${conversationId} was not paused; its streak of ${state.streak} is cleared`);
  else printStored(output, `conversation ${conversationId} was not paused`);
  return 0;
}
