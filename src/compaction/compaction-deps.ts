/**
 * What every compaction step needs: the ports, the resolved settings, the clock, and the summarizer
 * budget computed once when the compactor is created.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { MemfoldError } from '../errors.js';
import type { Archive } from '../archive/archive.js';
import type { PriceTable } from '../cost/model-price.js';
import type { Summarizer } from '../summarizer/summarizer.js';
import type { PersistenceProvider } from '../persistence/persistence-provider.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { calibrated } from '../tokens/usage-calibration.js';
import type { CompactionEvent } from './compaction-result.js';
import type { CompactionSettings } from './compaction-settings.js';
import { REMAINDER_STRETCH } from './fold/chunk.js';
import { promptOverhead, type FoldOptions } from './fold/fold.js';
import { batchBody } from './format/headers.js';
import { reconcileConversation, type ReconcileOutcome } from './journal/reconcile.js';
import type { ArchiveWriter } from './batches/archive-writer.js';
import type { ResummarizeContext } from './fold/resummarize.js';

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

/**
 * Tokens the transcript part of one summarizer request may take: a chunk, within the summarizer's window
 * share less its fixed instructions and room for the summary so far and the answer. Refused when nothing fits.
 */
export function summarizerInputBudget(summarizer: Summarizer, tokens: TokenCounter, settings: CompactionSettings): number {
  return Math.min(settings.chunkTokens, requestRoom(summarizer, tokens, settings));
}

/**
 * The most a chunk may hold when it takes in a small remainder: REMAINDER_STRETCH chunks, within one request's room.
 * Only for a summarizer that re-sends instructions with every request (`promptOverhead`, a model): the stretched
 * chunk gets one summary where two would keep more, which is worth a request only when a request costs one. The
 * offline summarizer keeps the remainder's chunk (README, "When memfold compacts": .913 / .897 readable evidence /
 * answer words at 16k, .907 / .889 stretched).
 */
export function chunkStretchBudget(summarizer: Summarizer, tokens: TokenCounter, settings: CompactionSettings): number {
  const room = requestRoom(summarizer, tokens, settings);
  const budget = Math.min(settings.chunkTokens, room);
  if (promptOverhead(summarizer, settings.maxSummaryTokens) === '') return budget;
  return Math.max(budget, Math.min(Math.floor(settings.chunkTokens * REMAINDER_STRETCH), room));
}

/** The summarizer's window share less its fixed instructions and room for the summary so far and the answer. */
function requestRoom(summarizer: Summarizer, tokens: TokenCounter, settings: CompactionSettings): number {
  const systemTokens = tokens.count(promptOverhead(summarizer, settings.maxSummaryTokens));
  const windowShare = Math.floor(summarizer.contextWindow * settings.summarizerInputShare);
  const room = windowShare - systemTokens - 2 * settings.maxSummaryTokens - 64;
  if (!(Math.min(settings.chunkTokens, room) >= 64)) {
    throw new MemfoldError(
      'invalid_config',
      `Invalid config field compaction.summarizerInputShare: the summarizer window (${summarizer.contextWindow} tokens, MEMFOLD_SUMMARY_CONTEXT_WINDOW) leaves no room for a chunk beside the instructions and twice maxSummaryTokens (${settings.maxSummaryTokens}): use a model with a larger window, or lower compaction.maxSummaryTokens`,
    );
  }
  return room;
}

export function foldOptions(deps: CompactionDeps, conversationId: string, depth: number, signal?: AbortSignal): FoldOptions {
  return {
    summarizer: deps.summarizer,
    tokens: deps.tokens,
    maxSummaryTokens: deps.settings.maxSummaryTokens,
    ...(signal ? { signal } : {}),
    onStep: (done, total) => deps.emit({ type: 'fold_progress', conversationId, done, total, depth }),
  };
}

/** How one compaction (or usage report) counts a conversation's messages, each message counted once. */
export interface ConversationCounts {
  /** The conversation's calibration factor by the assistant's usage (1 when none was observed). */
  factor: number;
  /** memfold's own count of a message: what sizes transcript segments. */
  message: (m: ConversationMessage) => number;
  /** The same times the factor: what every decision about the context uses (trigger, target, plan, tokens before and after). */
  context: (m: ConversationMessage) => number;
}

export function conversationCounts(tokens: TokenCounter, factor: number): ConversationCounts {
  const seen = new WeakMap<ConversationMessage, number>();
  const message = (m: ConversationMessage) => seen.get(m) ?? seen.set(m, tokens.countMessage(m)).get(m)!;
  return { factor, message, context: (m) => calibrated(message(m), factor) };
}

/** The conversation's calibration factor as the live store holds it (1 when none was observed since its last compaction). */
export async function calibrationFactorOf(persistence: PersistenceProvider, conversationId: string): Promise<number> {
  return (await persistence.getTokenCalibration(conversationId))?.factor ?? 1;
}

/** Finish or undo the conversation's interrupted operations and report each. The caller holds the lock. */
export async function reconcileAndReport(conversationId: string, deps: CompactionDeps): Promise<ReconcileOutcome[]> {
  const outcomes = await reconcileConversation(conversationId, deps);
  for (const outcome of outcomes) deps.emit({ type: 'reconciled', ...outcome });
  return outcomes;
}

/** The summary batches no higher-depth batch covers, in time order (`list` is time-ordered by the port's contract). */
export function listFrontier(deps: Pick<CompactionDeps, 'archive'>, conversationId: string) {
  return deps.archive.list({ conversationId, kind: 'summary', unmarkedOnly: true });
}

/** The summary a compaction's fold builds on: the newest frontier batch's text, without its header (none before the first). */
export function newestSummary(frontier: readonly ArchiveEntry[]): string | undefined {
  return frontier.length > 0 ? batchBody(frontier[frontier.length - 1]!.content) : undefined;
}

/** What re-summarization needs for one operation: its writer, and the fold options of the depth it writes. */
export function resummarizeContext(
  deps: CompactionDeps,
  ids: { conversationId: string; operationId: string },
  writer: ArchiveWriter,
  depth: number,
  signal?: AbortSignal,
): ResummarizeContext {
  return {
    ...ids,
    settings: deps.settings,
    archive: deps.archive,
    writer,
    inputBudget: deps.inputBudget,
    fold: foldOptions(deps, ids.conversationId, depth, signal),
  };
}
