import type { CompactionResult } from '../compaction/compaction-result.js';
import { reuseShare, type PrefixReuse } from './cache-reuse.js';

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
  /**
   * What the summarizer calls cost in US dollars (each compaction's `costUsd`, at memfold's price table), summed over
   * the compactions whose models have a price; the offline summarizer (the eval's default) costs 0.
   */
  summarizerUsd: number;
  /** Compactions whose cost is unknown (`costUsd: null`: a model without a price); `summarizerUsd` leaves them out. */
  unpricedCompactions: number;
  modelCalls: number;
  compactions: number;
  failedCompactions: number;
  /** Compactions tier 2 resolved (old tool outputs cleared, no summarizer call). */
  clearingCompactions: number;
  /** Tool outputs tier 2 cleared, and the tokens that freed (in any compaction). */
  toolOutputsCleared: number;
  tokensFreedByClearing: number;
  /** tokensBefore - tokensAfter of every compacted result, summed. */
  tokensFreed: number;
  /**
   * Prompt-cache reuse (`cache-reuse.ts`): tokens of the leading messages each request's prompt shares with the
   * previous request's, and tokens of those prompts (every request after a conversation's first; a request is made
   * before each assistant message, and none when the prompt exceeds the window: no-compaction).
   */
  reusedPromptTokens: number;
  comparedPromptTokens: number;
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
    summarizerUsd: 0,
    unpricedCompactions: 0,
    modelCalls: 0,
    compactions: 0,
    failedCompactions: 0,
    clearingCompactions: 0,
    toolOutputsCleared: 0,
    tokensFreedByClearing: 0,
    tokensFreed: 0,
    reusedPromptTokens: 0,
    comparedPromptTokens: 0,
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
  if (result.costUsd === null) cost.unpricedCompactions++;
  else cost.summarizerUsd += result.costUsd;
  if (result.status === 'compacted') {
    cost.compactions++;
    cost.tokensFreed += result.tokensBefore - result.tokensAfter;
    if (result.tier === 2) cost.clearingCompactions++;
  }
  cost.toolOutputsCleared += result.toolOutputsCleared;
  cost.tokensFreedByClearing += result.tokensFreedByClearing;
  if (result.status === 'failed') cost.failedCompactions++;
}

/** Adds a conversation's prompt-cache reuse to a cost. */
export function addReuse(cost: MethodCost, reuse: PrefixReuse): void {
  cost.reusedPromptTokens += reuse.reusedTokens;
  cost.comparedPromptTokens += reuse.promptTokens;
}

/** What a cost's sums give (null where nothing was counted, and the compaction figures of methods that do not compact). */
export interface CostFigures {
  /** reusedPromptTokens / comparedPromptTokens, in [0, 1]. */
  promptCacheReuse: number | null;
  /** compactions / rawTokens x 100,000 (memfold: rawTokens are the tokens appended). */
  compactionsPer100kTokens: number | null;
  /** tokensFreed / compactions. */
  meanTokensFreed: number | null;
}

export function costFigures(cost: MethodCost, compacts: boolean): CostFigures {
  return {
    promptCacheReuse: reuseShare({ reusedTokens: cost.reusedPromptTokens, promptTokens: cost.comparedPromptTokens }),
    compactionsPer100kTokens: compacts && cost.rawTokens > 0 ? (cost.compactions / cost.rawTokens) * 100_000 : null,
    meanTokensFreed: compacts && cost.compactions > 0 ? cost.tokensFreed / cost.compactions : null,
  };
}
