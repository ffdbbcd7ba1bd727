import type { CompactionResult } from '../compaction/compaction-result.js';

/** What a method spends to build its prompts, summed over conversations. */
export interface MethodCost {
  /** Conversations scored (prompt share of the window = promptTokens / (conversations x window)). */
  conversations: number;
  /** Tokens of the final prompts and of the whole conversations (memfold: its own chars/4 counter; baselines: `referenceTokens`). */
  promptTokens: number;
  rawTokens: number;
  /** Tokens of the messages no longer live (compacted away), memfold's counter. */
  compactedTokens: number;
  summarizerInputTokens: number;
  summarizerOutputTokens: number;
  modelCalls: number;
  compactions: number;
  failedCompactions: number;
  /** Messages neither live nor summarized by a depth-0 batch (memfold must keep this at 0). */
  lostMessages: number;
  /** Conversations over the window that the method cannot cut (no-compaction). */
  overWindow: number;
  /** Replay and compaction time (baselines: 0). */
  wallMs: number;
  /** Time of the memory_read searches. */
  searchMs: number;
}

export function zeroCost(): MethodCost {
  return {
    conversations: 0,
    promptTokens: 0,
    rawTokens: 0,
    compactedTokens: 0,
    summarizerInputTokens: 0,
    summarizerOutputTokens: 0,
    modelCalls: 0,
    compactions: 0,
    failedCompactions: 0,
    lostMessages: 0,
    overWindow: 0,
    wallMs: 0,
    searchMs: 0,
  };
}

export function sumCosts(costs: readonly MethodCost[]): MethodCost {
  const total = zeroCost();
  for (const cost of costs) for (const key of Object.keys(total) as Array<keyof MethodCost>) total[key] += cost[key];
  return total;
}

/** Adds one compaction's model use to a cost. */
export function addCompaction(cost: MethodCost, result: CompactionResult): void {
  cost.modelCalls += result.modelCalls;
  cost.summarizerInputTokens += result.summarizerInputTokens;
  cost.summarizerOutputTokens += result.summarizerOutputTokens;
  if (result.status === 'compacted') cost.compactions++;
  if (result.status === 'failed') cost.failedCompactions++;
}
