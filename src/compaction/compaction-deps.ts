/**
 * What every compaction step needs, as types: the ports, the resolved settings, the clock, and the summarizer
 * budgets computed once per settings object (`fold/summarizer-budget.ts`); and what each step of a run is given.
 */
import type { Archive } from '../archive/archive.js';
import type { PriceTable } from '../cost/model-price.js';
import type { Summarizer } from '../summarizer/summarizer.js';
import type { PersistenceProvider } from '../persistence/persistence-provider.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { CompactionEvent, CompactionResult } from './compaction-result.js';
import type { ConversationCounts } from './usage/conversation-counts.js';
import type { CompactionSettings } from './compaction-settings.js';

export interface CompactionDeps {
  summarizer: Summarizer;
  archive: Archive;
  persistence: PersistenceProvider;
  tokens: TokenCounter;
  settings: CompactionSettings;
  clock: () => number;
  newId: () => string;
  emit: (event: CompactionEvent) => void;
  /** Tokens the transcript part of one summarizer request may take (`summarizerInputBudget`). */
  inputBudget: number;
  /** What a chunk may stretch to so that a small remainder needs no request of its own (`chunkStretchBudget`). */
  stretchBudget: number;
  /**
   * Set when `beforeCompact` supplied the summary (`summarizer` then answers the fold with it): the compaction folds
   * its messages as one chunk, so one batch holds that summary. Default unset.
   */
  summarySupplied?: true;
  /** Prices of the summarizer's models, for each result's `costUsd` (`cost/`). Default `DEFAULT_PRICES`. */
  prices?: PriceTable;
}

/** What each step of a compaction run is given besides its own input (named, never positional). */
export interface StepContext {
  conversationId: string;
  deps: CompactionDeps;
  /** The result the run fills: it holds the history before, and collects what each step did. */
  result: CompactionResult;
  counts: ConversationCounts;
  signal?: AbortSignal;
}
