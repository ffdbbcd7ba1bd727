/**
 * The composition root: reads the configuration, opens the adapters and wires them to the ports.
 * With no options and no environment it runs on the embedded default: PGlite and LanceDB under
 * ./.memfold, the extractive summarizer and the hashing embedder.
 */
import { memfoldBackground } from './background/memfold-background.js';
import { createLiveSettings } from './compaction/live-settings.js';
import { createContextWarnings } from './compaction/usage/context-warnings.js';
import { resolveRuntimeConfig } from './config.js';
import { buildEmbedder, buildSummarizer } from './configured-adapters.js';
import { resolvePrices } from './cost/resolve-prices.js';
import { errorMessage } from './errors.js';
import type { Memfold } from './memfold-api.js';
import { conversationMethods, conversationRecords, memfoldClose, memfoldReconcile } from './memfold-methods.js';
import { openMemfold } from './memfold-open.js';
import { type MemfoldOptions, resolveMemfoldOptions } from './memfold-options.js';
import { memfoldSettings } from './memfold-settings.js';
import { compactToolFactory, memoryReadFactory } from './memfold-tools.js';
import { memfoldEvents, memfoldQueue, vectorNotes } from './memfold-wiring.js';
import { chooseSummaryModel, type SummaryModelChoice } from './openai/summary-model.js';
import { createTokenCounter } from './tokens/create-token-counter.js';

export type { MemfoldEvent, MemfoldOptions, MemfoldWarningEvent } from './memfold-options.js';
export type { ConversationScope, ConversationSettings } from './memfold-settings.js';
export type { ConversationListing, Memfold } from './memfold-api.js';

export async function createMemfold(given: MemfoldOptions = {}): Promise<Memfold> {
  // Everything is checked before anything opens: a bad setting must not leave a store open (PGlite's lock).
  const options = resolveMemfoldOptions(given);
  const config = resolveRuntimeConfig(options.config, options.env ?? process.env);
  const prices = resolvePrices(options.prices);
  // Resolved (and so validated) before anything opens; `configure` changes them later.
  const liveSettings = createLiveSettings(options.compaction);
  const { queue, bind } = memfoldQueue({ options, config });
  const summaryModel: SummaryModelChoice = options.summarizer ? { source: 'adapter' } : chooseSummaryModel(config);
  const summarizer = options.summarizer ?? buildSummarizer(config, summaryModel, queue, options.prompt, options.promptMode ?? config.summaryPromptMode);
  const tokens = options.tokens ?? createTokenCounter(config.assistantModel ? { model: config.assistantModel } : {});
  const embedder = options.archive ? undefined : (options.embedder ?? buildEmbedder(config, queue));
  const { emit, tokensAfterCompaction } = memfoldEvents(options);
  // One tracker of context_warning crossings for append and compaction, so a crossing is reported once.
  const contextWarnings = createContextWarnings({
    settingsOf: (conversationId) => liveSettings.of(conversationId),
    countMessage: (message) => tokens.countMessage(message),
    emit,
  });
  const { notes, onArchiveWarning } = vectorNotes({ embedder, emit });

  const { persistence, archive, compactor, offlineCompactor, stored, opened } = await openMemfold({
    options,
    config,
    embedder,
    summarizer,
    tokens,
    prices,
    liveSettings,
    contextWarnings,
    emit,
    onArchiveWarning,
    bindStore: bind,
  });

  const reconcile = memfoldReconcile({ archive, persistence, compactor, tokens, contextWarnings, emit });
  if (options.reconcileOnOpen) {
    try {
      await reconcile();
    } catch (error) {
      // Nothing is lost by waiting: the messages of an unfinished operation are still live, and the
      // next compaction of that conversation reconciles first. Opening must not fail on it.
      emit({ type: 'reconcile_failed', error: errorMessage(error) });
    }
  }

  const background = memfoldBackground({
    databaseUrl: options.store === 'memory' || options.persistence ? undefined : config.databaseUrl,
    namespace: config.namespace,
    jobs: { retryLimit: config.jobRetries, heartbeatSeconds: config.jobHeartbeatSeconds, superviseIntervalSeconds: config.jobSuperviseSeconds },
    compact: (conversationId) => compactor.compactStored(conversationId, { wait: true }),
    compactNow: (conversationId) => offlineCompactor.compactStored(conversationId, { wait: true }),
    settingsOf: (conversationId) => compactor.settingsOf(conversationId),
    usage: (conversationId) => compactor.usage(conversationId),
    forgetCount: (conversationId) => contextWarnings.changed(conversationId),
    emit,
  });

  return {
    config,
    compactor,
    persistence,
    archive,
    summarizer,
    summaryModel,
    tokens,
    prices,
    ...conversationMethods({ persistence, compactor, stored, contextWarnings, background }),
    reconcile,
    ...conversationRecords({ archive, persistence, namespace: config.namespace, contextWarnings, tokensAfterCompaction }),
    memoryRead: memoryReadFactory({ archive, persistence, tokens, maxTokens: options.memoryReadTokens, notes, embedder, onWarning: onArchiveWarning }),
    ...(memfoldSettings(compactor, stored) as Pick<Memfold, 'configure' | 'conversationSettings' | 'resetSettings'>),
    compactTool: compactToolFactory({ compactor, tokensAfterCompaction }),
    close: memfoldClose({ background, compactors: [compactor, offlineCompactor], opened }),
  };
}
