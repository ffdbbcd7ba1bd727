/**
 * The compaction settings: their type, defaults and validation, in one place. No other file supplies a default.
 */
import { InvalidConfigError } from '../errors.js';

export interface CompactionSettings {
  /** Tokens the assistant's model accepts. */
  contextWindow: number;
  /** Compaction runs when the history's tokens reach this. Default: window - min(20% of window, 20,000). */
  trigger: number;
  /** Share of the window at which a context warning is reported. */
  warnAt: number;
  /** Verbatim tail kept by tokens; the cut lands on a turn boundary. */
  keepRecentTokens: number;
  /** Verbatim tail kept by count (whichever keeps more of keepRecentTokens/keepRecentMessages wins, within budget). */
  keepRecentMessages: number;
  /** Opening turns kept verbatim. */
  keepFirstTurns: number;
  /** Tokens per chunk sent to the summarizer. */
  chunkTokens: number;
  /** Tokens per summary batch. */
  maxSummaryTokens: number;
  /** Batches shown at the head of the clip-archive. */
  clipFirst: number;
  /** Batches shown at the tail of the clip-archive. */
  clipLast: number;
  /** Extra frontier batches tolerated before re-summarization into a higher depth. */
  clipBuffer: number;
  /** Tool outputs in the verbatim tail are cut to this many lines (the full text is archived). */
  toolOutputMaxLines: number;
  /** A summarizer request never exceeds this share of the summarizer's window. */
  summarizerInputShare: number;
  /** Tokens per verbatim transcript segment in the archive (the retrieval unit of memory_read). */
  transcriptSegmentTokens: number;
}

export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** The trigger for a window: the window less a reserve of 20% of it, at most 20,000 tokens. */
export function defaultTrigger(contextWindow: number): number {
  return contextWindow - Math.min(Math.floor(contextWindow * 0.2), 20_000);
}

export const DEFAULT_COMPACTION_SETTINGS: Readonly<CompactionSettings> = Object.freeze({
  contextWindow: DEFAULT_CONTEXT_WINDOW,
  trigger: defaultTrigger(DEFAULT_CONTEXT_WINDOW),
  warnAt: 0.7,
  keepRecentTokens: 16_384,
  keepRecentMessages: 6,
  keepFirstTurns: 1,
  chunkTokens: 8_000,
  maxSummaryTokens: 1_024,
  clipFirst: 2,
  clipLast: 2,
  clipBuffer: 2,
  toolOutputMaxLines: 50,
  summarizerInputShare: 0.8,
  transcriptSegmentTokens: 800,
});

/**
 * Merge user settings over the defaults and validate. When only `contextWindow` is given, the trigger
 * and the token budgets that exceed it follow the window (so a 4,000-token window works out of the box).
 */
export function resolveCompactionSettings(input: Partial<CompactionSettings> = {}): CompactionSettings {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidConfigError('compaction', 'must be an object of settings');
  for (const [key, value] of Object.entries(input)) {
    if (!(key in DEFAULT_COMPACTION_SETTINGS)) throw new InvalidConfigError(`compaction.${key}`, 'unknown setting');
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
      throw new InvalidConfigError(`compaction.${key}`, 'must be a finite number');
    }
  }
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<CompactionSettings>;
  const contextWindow = defined.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const scaled: Partial<CompactionSettings> = {
    trigger: defaultTrigger(contextWindow),
    // The verbatim tail and the chunks scale down with a small window so that compaction can make room.
    keepRecentTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.keepRecentTokens, Math.floor(contextWindow * 0.25)),
    chunkTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.chunkTokens, Math.floor(contextWindow * 0.5)),
    maxSummaryTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.maxSummaryTokens, Math.floor(contextWindow * 0.08)),
    transcriptSegmentTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.transcriptSegmentTokens, Math.floor(contextWindow * 0.2)),
  };
  const settings: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...scaled, ...defined, contextWindow };
  validateCompactionSettings(settings);
  return settings;
}

function requireInt(settings: CompactionSettings, key: keyof CompactionSettings, min: number): void {
  const value = settings[key];
  if (!Number.isInteger(value) || value < min) {
    throw new InvalidConfigError(`compaction.${key}`, `must be an integer >= ${min} (got ${value})`);
  }
}

function requireShare(settings: CompactionSettings, key: keyof CompactionSettings): void {
  const value = settings[key];
  if (!(value > 0 && value <= 1)) throw new InvalidConfigError(`compaction.${key}`, `must be in (0, 1] (got ${value})`);
}

/** The integer settings and the least value each may take. */
const INTEGER_MINIMUMS = {
  contextWindow: 256,
  trigger: 1,
  keepRecentTokens: 0,
  keepRecentMessages: 0,
  keepFirstTurns: 0,
  chunkTokens: 64,
  maxSummaryTokens: 16,
  clipFirst: 0,
  clipLast: 1,
  clipBuffer: 0,
  toolOutputMaxLines: 1,
  transcriptSegmentTokens: 16,
} as const satisfies Partial<Record<keyof CompactionSettings, number>>;

export function validateCompactionSettings(settings: CompactionSettings): void {
  for (const [key, min] of Object.entries(INTEGER_MINIMUMS)) requireInt(settings, key as keyof typeof INTEGER_MINIMUMS, min);
  requireShare(settings, 'warnAt');
  requireShare(settings, 'summarizerInputShare');
  if (settings.trigger > settings.contextWindow) {
    throw new InvalidConfigError('compaction.trigger', `must be <= contextWindow (${settings.contextWindow})`);
  }
  if (settings.keepRecentTokens >= settings.trigger) {
    throw new InvalidConfigError('compaction.keepRecentTokens', `must be < trigger (${settings.trigger}) so compaction can make room`);
  }
}
