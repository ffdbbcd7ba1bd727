/**
 * The `Memfold` object `createMemfold` returns (`memfold.ts`, the composition root): its members and their contracts,
 * apart from the wiring, as `compactor-api.ts` is for the compactor.
 */
import type { Archive } from './archive/archive.js';
import type { EnqueueResult } from './background/compaction-queue.js';
import type { CompactionResult } from './compaction/compaction-result.js';
import type { CompactionSettings } from './compaction/compaction-settings.js';
import type { Compactor, CompactOptions, ContextUsage, UsageObservation } from './compaction/compactor.js';
import type { ReconcileOutcome } from './compaction/journal/reconcile.js';
import type { SettingsChange } from './compaction/live-settings.js';
import type { RuntimeConfig } from './config.js';
import type { ConversationMessage, NewMessage } from './conversation/types.js';
import type { PriceTable } from './cost/model-price.js';
import type { EraseOptions, EraseResult } from './erase-export/erase-conversation.js';
import type { ExportRecord } from './erase-export/export-conversation.js';
import type { ConversationScope, ConversationSettings } from './memfold-settings.js';
import type { SummaryModelChoice } from './openai/summary-model.js';
import type { LoadHistoryOptions, PersistenceProvider, TokenCalibration } from './persistence/persistence-provider.js';
import type { Summarizer } from './summarizer/summarizer.js';
import type { TokenCounter } from './tokens/token-counter.js';
import type { CompactTool, CompactToolLimits } from './tools/compact-tool.js';
import type { MemoryReadTool } from './tools/memory-read.js';

export interface Memfold {
  readonly config: RuntimeConfig;
  readonly compactor: Compactor;
  readonly persistence: PersistenceProvider;
  readonly archive: Archive;
  readonly summarizer: Summarizer;
  /**
   * Which model writes the summaries and why (`openai/summary-model.ts`): `summary_model` (MEMFOLD_SUMMARY_MODEL),
   * `provider_default` (a cheap model of the endpoint's provider), `assistant_model` (MEMFOLD_MODEL), `offline` (the
   * extractive summarizer), or `adapter` (a `summarizer` passed in). Each result's `models` says who answered.
   */
  readonly summaryModel: SummaryModelChoice;
  readonly tokens: TokenCounter;
  /** The price table results are priced with: `DEFAULT_PRICES` with `prices` merged in. */
  readonly prices: PriceTable;
  /**
   * Append messages to the live table; returns them as stored (ids, seq, times). Emits `context_warning` when the
   * conversation's context reaches `warnAt` × window and was below it when last seen (once per crossing). It keeps
   * a running count per conversation: the first append of a conversation in this process, and the first after its
   * live rows changed otherwise (a compaction), loads the history once to start it; the others count only their
   * own messages.
   */
  append(conversationId: string, messages: NewMessage[]): Promise<ConversationMessage[]>;
  /**
   * The live rows: system prompt, clip-archive, then the rest in order. With `includeCompacted`, also the rows overlay
   * compactions (`compaction.mode: 'overlay'`) kept, in their seq places, each with `compactedBy`: the full history as
   * the live table holds it.
   */
  history(conversationId: string, options?: LoadHistoryOptions): Promise<ConversationMessage[]>;
  /**
   * Pin messages (by id; `NewMessage.pinned` pins one as it is appended): no compaction summarizes, clears or archives
   * a pinned message, nor the rest of its unit (a tool call and its results); it stays live in its place and counts in
   * `usage`. Resolves to how many of `messageIds` are live messages of the conversation (the others are ignored).
   */
  pin(conversationId: string, messageIds: string[]): Promise<number>;
  /** Unpin messages: the next compaction may take them. Resolves as `pin` does. */
  unpin(conversationId: string, messageIds: string[]): Promise<number>;
  /** What the model should see: `history` with long tool outputs cut. */
  context(conversationId: string): Promise<ConversationMessage[]>;
  /**
   * The conversation's context against the settings: its tokens as `compact` counts them, their share of the
   * window, the trigger, target and warning mark, and what the next `compact()` would do (`next`). Reads only:
   * `compactor.usage`. Refuses an empty id (`conversationId`).
   */
  usage(conversationId: string): Promise<ContextUsage>;
  /**
   * Calibrate the conversation's token counts by the assistant's reported usage: call it after each assistant model
   * call with the prompt tokens the provider reported (`usage.prompt_tokens`) for the request built from
   * `context(conversationId)`, before appending the reply. promptTokens over memfold's own count of that context,
   * clamped to [1, 5], then multiplies every count memfold takes of the conversation (the trigger and target,
   * `usage`, `context_warning`), in every process sharing the store, until the next compaction. Returns the
   * calibration as stored: `compactor.observeUsage`.
   */
  observeUsage(conversationId: string, usage: UsageObservation): Promise<TokenCalibration>;
  /**
   * Compact the stored history when it passes the trigger (or always with `force`): `compactor.compactStored`. Never throws.
   * With `{ background: true }`, queue the compaction instead and return at once (README, Background compaction):
   * `queued: false` when a job for the conversation was already waiting.
   */
  compact(conversationId: string, options: CompactOptions & { background: true }): Promise<EnqueueResult>;
  compact(conversationId: string, options?: CompactOptions & { background?: false }): Promise<CompactionResult>;
  /**
   * Finish or undo interrupted compactions: of one conversation (waiting for its lock), or of every
   * conversation of the namespace (skipping, as `busy`, those being compacted right now).
   */
  reconcile(conversationId?: string): Promise<ReconcileOutcome[]>;
  /**
   * The namespace's conversations, most recently updated first: `id`, `messageCount` (live messages: no clip-archive,
   * no overlay rows, nothing archived) and `updatedAt` (its last append or commit). From the live store alone: the
   * archive is not read, so a listing costs one query whatever the archive holds.
   */
  listConversations(): Promise<ConversationListing[]>;
  /**
   * Everything kept of the conversation, as JSON Lines records (`erase-export/export-conversation.ts`): a `conversation`
   * header, every `live_message`, every `summary` batch (depth, label, time span, source ids, children), every verbatim
   * `segment` with its `archived_message`s. Reads only; a conversation with nothing stored gives the header alone.
   * Refuses an empty id (`conversationId`).
   */
  exportConversation(conversationId: string): AsyncIterable<ExportRecord>;
  /**
   * Remove the conversation from both stores: archive entries of every kind (physically: LanceDB rewrites the files
   * holding them and drops old versions and index files), live and overlay rows, the clip-archive, the id ledger, the
   * operation journal (with its recorded usage), the loop guard record, the token calibration and the conversation row.
   * Journaled and crash-safe like a compaction: recorded first, finished by the next reconcile if the process dies
   * midway. Waits for the conversation's lock (a running compaction finishes first) for at most `lockTimeoutMs`
   * (default 60,000) or until `signal` aborts: then it throws a `busy` MemfoldError naming the holder and the time
   * waited, having written nothing. Resolves `{ status: 'erased', ... }` or `{ status: 'not_found' }` (nothing was
   * stored; nothing written); throws `InvalidArgumentError` naming `conversationId` for a bad id, and a `MemfoldError`
   * when a store fails part-way (the next reconcile finishes it).
   */
  eraseConversation(conversationId: string, options?: EraseOptions): Promise<EraseResult>;
  /** The memory_read tool bound to one conversation. */
  memoryRead(conversationId: string): MemoryReadTool;
  /**
   * The compact tool bound to one conversation: the agent compacts its own context, with an optional `focus`
   * (`tools/compact-tool.ts`). It answers "No compaction needed" at or under `floorTokens` (default the `targetTokens`
   * setting), refuses while fewer than `minNewTokens` (default the `minFreedTokens` setting) were added since the
   * conversation's last compaction in this process, and otherwise compacts (forced) and says what it did.
   */
  compactTool(conversationId: string, limits?: Partial<CompactToolLimits>): CompactTool;
  /**
   * Change compaction settings while memfold runs, from the next compaction on: every conversation's (this process's
   * base), or with `{ conversationId }` one conversation's (its window, target, scope...). `partial` merges over what
   * was given before (`undefined` puts a key back to its default; a new window brings its own trigger and budgets
   * unless they are given). Validated as a whole before anything changes: `InvalidConfigError` naming
   * `compaction.<key>`, thrown on the call. A conversation's change is stored in the live store by default, so every
   * process on it (`memfold compact`, `usage`, `worker`, `mcp`) compacts the conversation with it: it resolves once
   * stored (docs/configuration.md, "Per-conversation settings"); with `persist: false` it stays in this process, over
   * the stored ones. Returns the settings now in force for that scope.
   */
  configure(partial: SettingsChange): CompactionSettings;
  configure(partial: SettingsChange, scope: ConversationScope & { persist: false }): CompactionSettings;
  configure(partial: SettingsChange, scope: ConversationScope & { persist?: true }): Promise<CompactionSettings>;
  configure(partial: SettingsChange, scope?: ConversationScope): CompactionSettings | Promise<CompactionSettings>;
  /** The conversation's stored overrides, read now, and the settings this process compacts it with. */
  conversationSettings(conversationId: string): Promise<ConversationSettings>;
  /** Remove the conversation's stored overrides, for every process; true when there were some. */
  resetSettings(conversationId: string): Promise<boolean>;
  /**
   * Close the stores this call opened, after the compactions and re-summarizations in flight have finished (for at
   * most `waitMs`, default 30,000; 0 closes at once). One still running then fails (`archive_failed`) and loses
   * nothing: the next open rolls it back.
   */
  close(options?: { waitMs?: number }): Promise<void>;
}

/** A conversation as `listConversations` lists it. */
export interface ConversationListing {
  id: string;
  /** Live messages: no clip-archive, no overlay rows, nothing archived. */
  messageCount: number;
  /** ISO time of its last append or commit. */
  updatedAt: string;
}
