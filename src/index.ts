/**
 * memfold's public API. `createMemfold` wires everything on the embedded default or the configured
 * services; `createCompactor` is the pipeline on ports you supply.
 */
export { createMemfold } from './on-demand-entries.js';
export type { ConversationListing, Memfold, MemfoldOptions } from './memfold.js';
export { DEFAULT_MEMFOLD_OPTIONS, memfoldOptionsSchema } from './memfold-options.js';
export { eraseConversation, type EraseDeps, type EraseOptions, type EraseResult } from './erase-export/erase-conversation.js';
export {
  EXPORT_FORMAT,
  exportConversation,
  type ExportArchivedMessage,
  type ExportDeps,
  type ExportHeader,
  type ExportLiveMessage,
  type ExportRecord,
  type ExportSegment,
  type ExportSummary,
} from './erase-export/export-conversation.js';
export {
  createCompactor,
  type Compactor,
  type CompactorOptions,
  type CompactOptions,
  type ContextUsage,
  type NextCompaction,
  type ResummarizeResult,
  type UsageObservation,
} from './compaction/compactor.js';
export type {
  CompactionEvent,
  CompactionFailureCode,
  CompactionResult,
  CompactionSkipReason,
  CompactionStage,
  CompactionStatus,
  CompactionSummary,
  CompactionTier,
} from './compaction/compaction-result.js';
export {
  MAX_FOCUS_CHARS,
  type BeforeCompactDecision,
  type BeforeCompactInfo,
  type CompactionHooks,
} from './compaction/compaction-hooks.js';
export { DEFAULT_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT, interpolatePrompt } from './openai/openai-prompt.js';
export { SUMMARY_PROMPT_MODES, type SummaryPromptMode } from './openai/openai-prompt-mode.js';
export type { SummaryModelChoice } from './openai/summary-model.js';
export { formatHeader, parseHeader, type BatchHeader } from './compaction/format/headers.js';
export { parseLabel, type ParsedLabel } from './compaction/format/labels.js';
export { buildClipArchive, clipArchiveLabels, CLIP_ARCHIVE_PREFIX } from './compaction/view/clip-archive.js';
export { renderTranscript, parseTranscript } from './compaction/format/transcript-format.js';
export type * from './conversation/types.js';
export {
  DEFAULT_COMPACTION_SETTINGS,
  compactionSettingsSchema,
  resolveCompactionSettings,
  COMPACTION_MODES,
  SESSION_SCOPES,
  type CompactionMode,
  type CompactionConfig,
  type CompactionSettings,
  type SessionScope,
} from './compaction/compaction-settings.js';
export { liveSessions, sessionSpans, type LiveSession, type SessionSpan } from './conversation/sessions.js';
export { turnAt, turnMap, type TurnSpan } from './conversation/turn-map.js';
export type { ScopeOutcome } from './compaction/plan/session-scope.js';
export { resolveRuntimeConfig, type RuntimeConfig } from './config.js';
export { createLiveSettings, type LiveSettings, type SettingsChange, type SettingsCheck } from './compaction/live-settings.js';
export type { ConversationScope, ConversationSettings } from './memfold-settings.js';
export { DEFAULT_FILE_TOOL_PATTERNS, type FileToolPatterns } from './compaction/compaction-settings.js';
export { DEFAULT_CONTINUATION_MESSAGE } from './compaction/view/context-view.js';
export { DEFAULT_PRICES, PRICES_AS_OF } from './cost/default-prices.js';
export { costOf, costOfModels, type Cost, type UsageByModel } from './cost/cost-of.js';
export { normalizeModelName, priceOf } from './cost/price-of.js';
export { resolvePrices, type PriceOverrides } from './cost/resolve-prices.js';
export type { ModelPrice, ModelUsage, PriceTable, TokenUsage } from './cost/model-price.js';
export { MemfoldError, InvalidArgumentError, InvalidConfigError, type MemfoldErrorCode } from './errors.js';
export type { Archive, ArchiveErasure, SearchQuery, SearchHit, ListOptions, ArchiveFilter, WriteOptions } from './archive/archive.js';
export type { EntryDigest } from './archive/entry-digest.js';
export type {
  PersistenceProvider,
  PersistenceTransaction,
  CompactionOperation,
  OperationRecordInput,
  CommitCompaction,
  CommitReport,
  LoadHistoryOptions,
  CountLiveOptions,
  LiveCounts,
  OperationKind,
  CommitClearing,
  ClearedOutput,
  LoopGuardState,
  LoopGuardUpdate,
  TokenCalibration,
  TokenCalibrationUpdate,
  ConversationErasure,
  EraseConversationOptions,
  ConversationSettingsRecord,
} from './persistence/persistence-provider.js';
export { DEFAULT_LOCK_WAIT_MS, type LockWaitOptions } from './persistence/lock-wait.js';
export type {
  Summarizer,
  Summary,
  SummaryUsage,
  SummarizeRequest,
  FoldRequest,
  ResummarizeRequest,
  SummaryLine,
  SummaryToolCall,
} from './summarizer/summarizer.js';
export type { Embedder } from './embedding/embedder.js';
export type { TokenCounter } from './tokens/token-counter.js';
export { createMemoryReadTool, MEMORY_READ_DEFINITION, type FunctionToolDefinition, type MemoryReadTool, type MemoryReadOptions } from './tools/memory-read.js';
export { parseMemoryReadArgs, type MemoryReadArgs } from './tools/memory-read-args.js';
export {
  COMPACT_DEFINITION,
  createCompactTool,
  parseCompactArgs,
  type CompactArgs,
  type CompactTool,
  type CompactToolLimits,
  type CompactToolTarget,
} from './tools/compact-tool.js';
export { compactionSummaryText, MAX_COMPACT_SUMMARY_CHARS } from './tools/compact-summary.js';
export { runTool, type ToolResult } from './tools/tool-arguments.js';
export {
  definitionFor,
  strictParameters,
  type ChatToolDefinition,
  type ResponsesToolDefinition,
  type ShapedDefinitions,
  type ToolFormat,
} from './tools/tool-shapes.js';
export { toChatMessages, toResponsesInput, type OpenAIMessagesOptions } from './openai/openai-messages.js';
export { fromChatMessage, fromResponsesOutput, type ChatMessageLike, type ResponsesItemLike } from './openai/openai-replies.js';
export type { ReconcileOutcome } from './compaction/journal/reconcile.js';
export { createMcpServer, mcpServerFor, type McpServerOptions, type MemfoldMcpOptions } from './mcp/mcp-server.js';
export { serveMcpHttp } from './on-demand-entries.js';
export type { McpHttpListener, McpHttpOptions } from './mcp/mcp-http.js';
export { mcpScope, type McpScope, type McpScopeOptions } from './mcp/mcp-scope.js';
export { memfoldBackend, openArchiveBackend, type ArchiveBackend } from './mcp/mcp-backends.js';
export type { McpAccess, McpBackend, McpToolAnswer, McpToolSpec } from './mcp/mcp-tools.js';
export type { EnqueueResult, JobOutcome } from './background/compaction-queue.js';
export type { BackgroundEvent } from './background/background-events.js';
export { openJobBoss, queueNames, type CompactionJobData, type JobQueueOptions } from './background/pg-boss-queue.js';
export { startCompactionWorker, type CompactionWorker, type WorkerOptions } from './background/compaction-worker.js';
export { openLanceArchive, createKyselyPersistence } from './on-demand-adapters.js';
export type { LanceArchiveOptions } from './archive/lancedb/lancedb-archive.js';
export type { KyselyPersistenceOptions } from './persistence/kysely/kysely-store.js';
export { createInMemoryPersistence, type InMemoryPersistenceOptions } from './persistence/in-memory/in-memory-persistence.js';
export { createInMemoryPersistenceState, type InMemoryPersistenceState } from './persistence/in-memory/in-memory-tables.js';
export {
  createInMemoryArchive,
  createInMemoryArchiveState,
  type InMemoryArchiveOptions,
  type InMemoryArchiveState,
} from './archive/in-memory/in-memory-archive.js';
export { createExtractiveSummarizer } from './summarizer/extractive/extractive-summarizer.js';
export { createOpenAISummarizer } from './openai/openai-summarizer.js';
export { withFallback } from './summarizer/with-fallback.js';
export { createHashingEmbedder } from './embedding/hashing-embedder.js';
export { createOpenAIEmbedder } from './openai/openai-embedder.js';
export { createTokenCounter } from './tokens/create-token-counter.js';
export { CALIBRATION_RANGE } from './tokens/usage-calibration.js';
