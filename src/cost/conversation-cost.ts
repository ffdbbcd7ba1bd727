/**
 * A conversation's summarizer cost so far, pure: the sum of what its committed compactions recorded on their
 * operation rows (`CompactionOperation.usage`, migration 008).
 */
import type { CompactionOperation } from '../persistence/persistence-provider.js';
import { roundUsd } from './cost-of.js';
import type { ModelUsage } from './model-price.js';

export interface ConversationCost {
  /** Committed compactions (tier 3) whose usage was recorded. */
  recorded: number;
  /** Committed compactions without it: finished by reconcile after a crash, or committed before migration 008. */
  unrecorded: number;
  /** Calls and tokens per model that answered, over the recorded compactions. */
  byModel: Record<string, ModelUsage>;
  /** The recorded costs summed (US dollars, at the prices of each compaction's time); null when any was null (a model without a price). */
  costUsd: number | null;
}

export function conversationCost(operations: readonly CompactionOperation[]): ConversationCost {
  const total: ConversationCost = { recorded: 0, unrecorded: 0, byModel: {}, costUsd: 0 };
  for (const operation of operations) {
    if (operation.status !== 'committed' || (operation.kind ?? 'compaction') !== 'compaction') continue;
    if (operation.usage === undefined) {
      total.unrecorded++;
      continue;
    }
    total.recorded++;
    for (const [model, used] of Object.entries(operation.usage.byModel)) {
      const sum = total.byModel[model] ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
      total.byModel[model] = sum;
      sum.calls += used.calls;
      sum.inputTokens += used.inputTokens;
      sum.outputTokens += used.outputTokens;
    }
    const cost = operation.usage.costUsd;
    total.costUsd = total.costUsd === null || cost === null ? null : roundUsd(total.costUsd + cost);
  }
  return total;
}
