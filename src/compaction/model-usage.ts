/** What a compaction's model calls took, added to its result as each fold step lands: calls, tokens, cost, fallbacks. */
import { costOfModels } from '../cost/cost-of.js';
import { DEFAULT_PRICES } from '../cost/default-prices.js';
import type { CompactionDeps } from './compaction-deps.js';
import { HOOK_SUMMARIZER_ID } from './compaction-hooks.js';
import type { CompactionResult } from './compaction-result.js';
import type { FoldStep } from './fold/fold.js';

export function countSteps(input: {
  steps: readonly FoldStep[];
  result: CompactionResult;
  conversationId: string;
  deps: Pick<CompactionDeps, 'emit' | 'prices'>;
}): void {
  const { result, conversationId, deps } = input;
  for (const { summary } of input.steps) {
    if (!result.models.includes(summary.model)) result.models.push(summary.model);
    // A summary the application supplied took no call.
    if (summary.model === HOOK_SUMMARIZER_ID) continue;
    result.modelCalls++;
    result.summarizerInputTokens += summary.usage.inputTokens;
    result.summarizerOutputTokens += summary.usage.outputTokens;
    const used = result.usageByModel[summary.model] ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
    result.usageByModel[summary.model] = used;
    used.calls++;
    used.inputTokens += summary.usage.inputTokens;
    used.outputTokens += summary.usage.outputTokens;
    result.costUsd = costOfModels(result.usageByModel, deps.prices ?? DEFAULT_PRICES).usd;
    if (summary.fallback) {
      result.fallbacks.push(summary.fallback);
      deps.emit({ type: 'fallback', conversationId, ...summary.fallback });
    }
  }
}
