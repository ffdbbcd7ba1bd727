/**
 * What the compactor takes and offers: its options, the options of one compaction, and the `Compactor` itself.
 * `createCompactor` (compactor.ts) builds it.
 */
import type { Archive } from '../archive/archive.js';
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import type { PriceTable } from '../cost/model-price.js';
import type { PersistenceProvider, TokenCalibration } from '../persistence/persistence-provider.js';
import type { Summarizer } from '../summarizer/summarizer.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { CompactionHooks } from './compaction-hooks.js';
import type { CompactionEvent, CompactionResult } from './compaction-result.js';
import type { CompactionSettings } from './compaction-settings.js';
import type { ContextUsage } from './usage/context-usage.js';
import type { ContextWarnings } from './usage/context-warnings.js';
import type { LiveSettings, SettingsChange } from './live-settings.js';
import type { UsageObservation } from './usage/observe-usage.js';
import type { ReconcileOutcome } from './journal/reconcile.js';
import type { ResummarizeResult } from './fold/resummarize-depth.js';

export interface CompactorOptions {
  summarizer: Summarizer;
  archive: Archive;
  persistence: PersistenceProvider;
  tokens: TokenCounter;
  settings?: Partial<CompactionSettings>;
  clock?: () => number;
  newId?: () => string;
  onEvent?: (event: CompactionEvent) => void;
  /**
   * Where `context_warning` crossings are tracked (`createContextWarnings`). `createMemfold` passes the one its
   * `append` reports to, so a crossing is reported once whichever path sees it. Default: the compactor's own.
   */
  contextWarnings?: ContextWarnings;
  /** The application's `beforeCompact` / `afterCompact` (`compaction-hooks.ts`). Default none. */
  hooks?: CompactionHooks;
  /** Prices of the summarizer's models, for each result's `costUsd` (`resolvePrices`). Default `DEFAULT_PRICES`. */
  prices?: PriceTable;
  /**
   * Where the settings live when they may change at run time (`createLiveSettings`); `createMemfold` passes the one its
   * `configure` and `append` use. Default: one of its own, made from `settings`.
   */
  liveSettings?: LiveSettings;
}

export interface CompactOptions {
  /** Compact even below the trigger. */
  force?: boolean;
  /**
   * Wait for another compaction (or erase) of the same conversation instead of skipping with `busy`: for at most
   * `lockTimeoutMs`, then `skipped` / `busy` with `error` naming the holder and how long it waited.
   */
  wait?: boolean;
  /** Milliseconds `wait` waits for the conversation's lock at most. Default `DEFAULT_LOCK_WAIT_MS` (60,000). */
  lockTimeoutMs?: number;
  /** Aborts the compaction, and a `wait` for the lock (`failed` / `aborted`, naming the holder). */
  signal?: AbortSignal;
  /**
   * What the summary must keep (at most 400 characters): passed to the summarizer with every request of this
   * compaction, and to `beforeCompact`. Default none.
   */
  focus?: string;
}

export interface Compactor {
  /** The settings of conversations without overrides, as they are now (`configure` changes them). */
  readonly settings: CompactionSettings;
  /** One conversation's settings as they are now: `settings` with its overrides. */
  settingsOf(conversationId: string): CompactionSettings;
  /**
   * Change settings from the next compaction on (`live-settings.ts`): every conversation's, or with `{ conversationId }`
   * one conversation's (its window, target, scope...). Validated before anything changes (`InvalidConfigError`
   * naming `compaction.<key>`; a window that leaves the summarizer no room is refused too). Returns the settings now
   * in force for that scope. In this process only.
   */
  configure(partial: SettingsChange, scope?: { conversationId: string }): CompactionSettings;
  /**
   * Compact the stored conversation: load the live rows and their calibration and plan (below the trigger nothing
   * is locked), then as `compactHistory` does: under the lock, reconcile, re-plan if the rows changed, run. The
   * result's history is the live history (after the compaction, or as it stood when nothing changed). Never throws.
   */
  compactStored(conversationId: string, options?: CompactOptions): Promise<CompactionResult>;
  /**
   * Compact `history`, the conversation as the caller holds it, counted with the conversation's calibration
   * (`observeUsage`). Planned before the lock (below the trigger nothing is locked, and only the calibration is
   * read); under the lock, after reconciling, a history that is no longer live (part of it archived meanwhile) is
   * re-planned from the live rows. On skip or failure the result's history is the one given. Never throws.
   */
  compactHistory(history: readonly ConversationMessage[], conversationId: string, options?: CompactOptions): Promise<CompactionResult>;
  /** `compactHistory` by the name of the original design's contract (`compress(history, conversationId)`): the same operation. */
  compress(history: readonly ConversationMessage[], conversationId: string, options?: CompactOptions): Promise<CompactionResult>;
  /**
   * Wait until the compactions and re-summarizations running now have finished, or `timeoutMs` has passed; resolves to
   * how many are still running (0: all done). Work started meanwhile is not waited for. memfold's `close` calls it.
   */
  drain(timeoutMs: number): Promise<number>;
  /** Operator re-summarization: fold every frontier batch of `depth` into one batch of depth + 1 and refresh the clip-archive. */
  resummarizeDepth(conversationId: string, depth: number): Promise<ResummarizeResult>;
  /** The frontier: summary batches no higher-depth batch covers, in time order. */
  frontier(conversationId: string): Promise<ArchiveEntry[]>;
  /** Finish or undo the conversation's interrupted compactions (waits for its lock). */
  reconcile(conversationId: string): Promise<ReconcileOutcome[]>;
  /**
   * Whether the loop guard has paused automatic compaction of this conversation. Read from the live store, so a
   * pause set by another process (or before this one started) counts.
   */
  isPaused(conversationId: string): Promise<boolean>;
  /** Lift the loop guard's pause and forget its streak, in the live store: for every process (a compaction that gets under the trigger also lifts it). */
  resume(conversationId: string): Promise<void>;
  /**
   * The conversation's live history against the settings: its tokens as `compactStored` counts them, and what the
   * next automatic compaction would do, from the same planner and loop guard. Reads only; throws on a bad id or a
   * failing store.
   */
  usage(conversationId: string): Promise<ContextUsage>;
  /**
   * Calibrate the conversation's token counts by the assistant's reported usage: call it after each assistant model
   * call with the prompt tokens of the request built from `context(conversationId)`, before appending the reply. The
   * factor, promptTokens over memfold's own count of that context clamped to [1, 5], multiplies every count memfold
   * takes of the conversation (trigger, target and plan, `usage`, `context_warning`) in every process sharing the
   * store, until a compaction's commit drops it. Refuses (`InvalidArgumentError`) an empty id (`conversationId`), an
   * observation that is not an object (`usage`) or whose `promptTokens` is not a positive integer (`promptTokens`),
   * and a conversation with no messages (`conversationId`), writing nothing.
   */
  observeUsage(conversationId: string, usage: UsageObservation): Promise<TokenCalibration>;
}
