import type { ConversationMessage, SummaryBatch } from '../conversation/types.js';
import type { ModelUsage } from '../cost/model-price.js';
import type { OperationUsage } from '../persistence/persistence-provider.js';
import type { ScopeOutcome } from './plan/session-scope.js';

export type CompactionStatus = 'compacted' | 'skipped' | 'failed';

/**
 * Why compaction did not run: under the trigger, no message between the kept head and tail, another
 * compaction holds the conversation, the loop guard paused automatic compaction (see LOOP_GUARD_LIMIT), or the
 * application's `beforeCompact` hook cancelled it.
 */
export type CompactionSkipReason = 'below_trigger' | 'nothing_to_compact' | 'too_little_to_free' | 'busy' | 'paused' | 'cancelled';

/** Where a failed compaction stopped. Nothing is lost in any of them: the live rows stay as they were. */
export type CompactionFailureCode =
  | 'invalid_input'
  | 'model_failed'
  | 'archive_failed'
  | 'readback_failed'
  | 'commit_failed'
  | 'reconcile_failed'
  | 'hook_failed'
  | 'aborted'
  | 'unexpected';

/** `clear` is tier 2 (archive the cleared tool outputs, read them back, commit the placeholders); the rest tier 3. */
export type CompactionStage = 'plan' | 'clear' | 'fold' | 'archive' | 'resummarize' | 'commit';

/** Which tier resolved a compaction: 2, old tool outputs cleared (no summarizer call); 3, summarized (after tier 2 when it cleared any). */
export type CompactionTier = 2 | 3;

export type CompactionEvent =
  /**
   * The context reached `threshold` (floor(contextWindow × warnAt)) tokens: once per crossing, seen after an append
   * or when compaction counts the history (`context-warnings.ts`).
   */
  | { type: 'context_warning'; conversationId: string; tokens: number; threshold: number }
  | { type: 'stage'; conversationId: string; stage: CompactionStage }
  | { type: 'fold_progress'; conversationId: string; done: number; total: number; depth: number }
  | { type: 'fallback'; conversationId: string; from: string; reason: string }
  /** Tier 2 committed: `cleared` tool outputs replaced by placeholders naming `labels`, freeing `tokensFreed`. */
  | { type: 'tool_outputs_cleared'; conversationId: string; operationId: string; cleared: number; tokensFreed: number; labels: string[] }
  /** An interrupted operation was finished (`committed`) or undone (`rolled_back`), or left to the process running it (`busy`). */
  | { type: 'reconciled'; conversationId: string; operationId: string; action: 'committed' | 'rolled_back' | 'busy'; reason: string }
  /** Reconciling on open failed (the next compaction of each affected conversation tries again). */
  | { type: 'reconcile_failed'; error: string }
  /** The loop guard paused automatic compaction of the conversation. */
  | { type: 'auto_compaction_paused'; conversationId: string; tokens: number; trigger: number; reason: string }
  /** The loop guard could not read or write its record in the live store; the compaction's result stands, uncounted. */
  | { type: 'loop_guard_failed'; conversationId: string; error: string }
  /** A compaction is about to run (after `beforeCompact`, before the lock): the planned tier and the tokens it starts from. */
  | { type: 'compaction_started'; conversationId: string; tier: CompactionTier; tokensBefore: number; summarizer: string }
  /** A compaction that started has its result (compacted or failed; `busy` when another process held the conversation). */
  | ({ type: 'compaction_ended'; conversationId: string } & CompactionSummary)
  /** `afterCompact` threw; the result it was given stands. */
  | { type: 'hook_failed'; conversationId: string; hook: 'afterCompact'; error: string };

/** A result in brief, as `compaction_ended` reports it. */
export type CompactionSummary = Pick<
  CompactionResult,
  | 'status'
  | 'skipReason'
  | 'failureCode'
  | 'tier'
  | 'tokensBefore'
  | 'tokensAfter'
  | 'models'
  | 'modelCalls'
  | 'summarizerInputTokens'
  | 'summarizerOutputTokens'
  | 'usageByModel'
  | 'costUsd'
  | 'durationMs'
>;

export function compactionSummary(result: CompactionResult): CompactionSummary {
  const {
    status,
    skipReason,
    failureCode,
    tier,
    tokensBefore,
    tokensAfter,
    models,
    modelCalls,
    summarizerInputTokens,
    summarizerOutputTokens,
    usageByModel,
    costUsd,
    durationMs,
  } = result;
  return {
    status,
    ...(skipReason !== undefined ? { skipReason } : {}),
    ...(failureCode !== undefined ? { failureCode } : {}),
    ...(tier !== undefined ? { tier } : {}),
    tokensBefore,
    tokensAfter,
    models: [...models],
    modelCalls,
    summarizerInputTokens,
    summarizerOutputTokens,
    usageByModel: Object.fromEntries(Object.entries(usageByModel).map(([model, usage]) => [model, { ...usage }])),
    costUsd,
    durationMs,
  };
}

export interface CompactionResult {
  /**
   * `compacted`: the live table changed; `skipped`: nothing ran (`skipReason` says why); `failed`: nothing changed
   * (`failureCode`, `error`). When tier 2 committed and summarizing then failed, the result is `compacted` with
   * `tier: 2` and the summarizer's `failureCode` and `error`.
   */
  status: CompactionStatus;
  skipReason?: CompactionSkipReason;
  failureCode?: CompactionFailureCode;
  error?: string;
  /**
   * Set when the failure came out of a model or embedding client's retry loop: the attempts it made. The client has
   * retried what was worth retrying, so a background job does not retry the compaction on top (`background/`).
   */
  clientAttempts?: number;
  /** Set when `compacted`: the tier that resolved it (2: tool outputs cleared, no summarizer call; 3: summarized). */
  tier?: CompactionTier;
  /** Tool outputs tier 2 replaced by placeholders (0 when it did not run). */
  toolOutputsCleared: number;
  /** Tokens tier 2 freed (counted as `tokensBefore` is). */
  tokensFreedByClearing: number;
  /** The tier-2 operation, when tier 2 ran (`operationId` is the last operation: tier 3's when it ran). */
  clearingOperationId?: string;
  /** The history the model should see now: system prompt, clip-archive, first turns, recent messages. On skip or failure, the history given. */
  history: ConversationMessage[];
  operationId?: string;
  messagesBefore: number;
  messagesAfter: number;
  archivedMessages: number;
  /** Of the archived messages, those that opened a turn the verbatim tail continues, summarized on their own (`split-turn.ts`). */
  turnPrefixMessages: number;
  tokensBefore: number;
  tokensAfter: number;
  /** New depth-0 batches. */
  batches: SummaryBatch[];
  /** New higher-depth batches made by re-summarization. */
  resummarized: SummaryBatch[];
  /** Model calls that fell back to the extractive summarizer, with the reason. */
  fallbacks: Array<{ from: string; reason: string }>;
  /**
   * Who wrote the summaries, in the order they first answered: a model (`Summary.model`), `extractive` (the offline
   * summarizer, or the fallback), `hook` (a summary `beforeCompact` supplied). Empty when nothing was summarized.
   */
  models: string[];
  /** What `beforeCompact` decided, when it cancelled (`reason` when it gave one) or supplied the summary. */
  hook?: { decision: 'cancelled' | 'supplied'; reason?: string };
  modelCalls: number;
  summarizerInputTokens: number;
  summarizerOutputTokens: number;
  /**
   * The summarizer's calls and tokens per model that answered (`Summary.model`; `extractive` for the offline summarizer
   * and the fallback). A summary `beforeCompact` supplied took no call and is not listed.
   */
  usageByModel: Record<string, ModelUsage>;
  /**
   * What the summarizer calls cost in US dollars, at the compactor's price table (`cost/`, `createMemfold({ prices })`):
   * 0 when nothing was summarized or only the offline summarizer answered; null when a model in `usageByModel` has
   * no price. Every input token is priced as uncached (the summarizer reports no cache hits).
   */
  costUsd: number | null;
  durationMs: number;
  /**
   * Wall time per stage, in ms. `plan` is the one plan made before the lock (the tiers, the cut and tier 3's chunks).
   * Archive writes run beside the fold: `fold` includes them, `archive` is only the wait for those still running once
   * the last summary is in.
   */
  stageMs: Partial<Record<CompactionStage, number>>;
  /**
   * With a `sessionScope` set, what the plan did: the cut on a session boundary, or the token cut it fell back to
   * and why (`ScopeOutcome`). Absent without a scope, and on skips before planning.
   */
  scope?: ScopeOutcome;
}

/** A result that changed nothing yet: the history as given, no batches, status `skipped`. */
export function initialResult(history: readonly ConversationMessage[], tokensBefore: number): CompactionResult {
  return {
    status: 'skipped',
    history: [...history],
    messagesBefore: history.length,
    messagesAfter: history.length,
    archivedMessages: 0,
    turnPrefixMessages: 0,
    toolOutputsCleared: 0,
    tokensFreedByClearing: 0,
    tokensBefore,
    tokensAfter: tokensBefore,
    batches: [],
    resummarized: [],
    fallbacks: [],
    models: [],
    modelCalls: 0,
    summarizerInputTokens: 0,
    summarizerOutputTokens: 0,
    usageByModel: {},
    costUsd: 0,
    durationMs: 0,
    stageMs: {},
  };
}

/** What the operation row keeps of a result's summarizer usage (`commitCompaction.usage`). */
export function operationUsage(result: Pick<CompactionResult, 'usageByModel' | 'costUsd'>): OperationUsage {
  const byModel = Object.fromEntries(
    Object.entries(result.usageByModel).map(([model, used]) => [model, { calls: used.calls, inputTokens: used.inputTokens, outputTokens: used.outputTokens }]),
  );
  return { byModel, costUsd: result.costUsd };
}

/**
 * The operation a compaction committed: tier 3's when it summarized, tier 2's when clearing resolved it (alone, or
 * after summarizing failed, when `operationId` names the summarizing operation that was rolled back); none when
 * nothing was committed.
 */
export function committedOperationId(result: Pick<CompactionResult, 'status' | 'tier' | 'operationId' | 'clearingOperationId'>): string | undefined {
  if (result.status !== 'compacted') return undefined;
  return result.tier === 2 ? (result.clearingOperationId ?? result.operationId) : result.operationId;
}
