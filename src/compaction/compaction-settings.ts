/**
 * The compaction settings: their type, defaults and validation, in one place. No other file supplies a default.
 */
import { InvalidConfigError } from '../errors.js';
import type { CompactionMode } from '../persistence/persistence-provider.js';

export type { CompactionMode };

/**
 * How compaction treats earlier sessions (`conversation/sessions.ts` says where sessions begin):
 * - `none`: no scope; the verbatim tail is cut by tokens at a turn boundary (`keepRecentTokens`, `keepRecentMessages`).
 * - `fixedCount`: keep the last `keepSessions` sessions verbatim and compact every older one.
 * - `tokenBudget`: compact whole sessions, oldest first, until the rest fits the tail budget.
 */
export type SessionScope = 'none' | 'fixedCount' | 'tokenBudget';
export const SESSION_SCOPES: readonly SessionScope[] = ['none', 'fixedCount', 'tokenBudget'];

export interface CompactionSettings {
  /** Tokens the assistant's model accepts. */
  contextWindow: number;
  /**
   * Compaction runs when the history's tokens reach this. Default: the window less a reserve of 20% of it, or, for
   * windows above 200,000 tokens, less min(20% of it, 20,000).
   */
  trigger: number;
  /**
   * The low-water mark: a compaction cuts the verbatim tail so that the history comes down to about this many tokens
   * (the clip-archive counted at its largest), not just under the trigger, so that compactions are fewer and larger.
   * Default: TARGET_SHARE of the window (below the trigger).
   */
  targetTokens: number;
  /**
   * A compaction that would free fewer tokens than this does nothing (`skipReason: 'too_little_to_free'`) unless it
   * is forced or the history has reached the window. Default: MIN_FREED_SHARE of the window.
   */
  minFreedTokens: number;
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
  /**
   * Messages without a session id start a new session after a pause longer than this many minutes (0: never; the
   * session then changes only where the messages' session ids do). Default 30, the inactivity timeout web analytics
   * use for a visit: a pause of half an hour is a new sitting, a slow answer or tool run is not.
   */
  sessionGapMinutes: number;
  /** The scope over earlier sessions (`SessionScope`). Default `none`: the token-based tail. */
  sessionScope: SessionScope;
  /** The sessions `fixedCount` keeps verbatim, the newest included (other scopes do not read it). Default 2. */
  keepSessions: number;
  /**
   * How a compaction takes the archived messages out of the live history: `delete` (default) deletes their rows;
   * `overlay` keeps them, marked compacted by the operation, hidden from the live history and readable with
   * `loadHistory(id, { includeCompacted: true })`. Recorded on each operation, so whoever finishes it commits it so.
   */
  mode: CompactionMode;
  /**
   * Tier 2, before summarizing: replace old tool outputs in the live rows by a placeholder naming the archive label
   * that holds them verbatim (`clear-tool-outputs.ts`). Summarizing (tier 3) runs only when that is not enough.
   */
  clearToolOutputs: boolean;
  /** Tier 2 leaves whole the results of this many most recent tool calls. */
  keepToolUses: number;
  /** Tool names (the call's function name) whose outputs tier 2 never clears. */
  excludeTools: readonly string[];
  /** Tier 2 clears only outputs of at least this many tokens: a placeholder costs about 50, so smaller ones free nothing. */
  clearToolOutputMinTokens: number;
  /**
   * Every summary batch ends with the files its messages' tool calls read and modified (`files-footer.ts`), whatever
   * the summarizer wrote, so file knowledge survives any summarizer. Default true.
   */
  filesFooter: boolean;
  /** Which tools read and which modify files, as words of the tool's name (`FileToolPatterns`). */
  fileToolPatterns: FileToolPatterns;
  /**
   * After a compaction, `context()` ends with a short system note (`kind: 'continuation'`, never stored) saying the
   * history was compacted, how to reach it with memory_read, and to go on without asking again, until the next user
   * message: `true` for DEFAULT_CONTINUATION_MESSAGE, a string for your own text, `false` (default) for none. At the
   * end of the context, so the prompt before it stays the same (a provider's prompt cache keeps it).
   */
  continuationMessage: boolean | string;
  /**
   * Compact outside the caller's turn: an append that takes the context past the trigger queues a job (pg-boss on
   * PostgreSQL, run by `memfold worker`; in this process on PGlite or in memory) instead of waiting for `compact`, and
   * `context` compacts at once with the offline summarizer only when the context reached the window. Default false.
   */
  background: boolean;
}

/** The settings by the name of the original design's contract; `CompactionSettings` is the same type. */
export type CompactionConfig = CompactionSettings;

/**
 * Tool-name patterns, matched case-insensitively against the words of a tool's name (split at `_`, `-`, `.`, spaces
 * and camelCase): `str_replace` matches `str_replace_editor`, `edit` matches `MultiEdit`, never `credit`. A tool that
 * matches both lists modifies.
 */
export interface FileToolPatterns {
  read: readonly string[];
  modified: readonly string[];
}

/** The tool names of coding agents (SWE-agent, OpenHands, Claude Code, Gemini CLI, Cline, Codex). */
export const DEFAULT_FILE_TOOL_PATTERNS: Readonly<FileToolPatterns> = Object.freeze({
  read: Object.freeze(['read', 'view', 'cat', 'open', 'grep', 'search', 'list', 'ls', 'find', 'glob', 'head', 'tail']),
  modified: Object.freeze([
    'write',
    'edit',
    'create',
    'patch',
    'apply_patch',
    'str_replace',
    'replace',
    'insert',
    'append',
    'delete',
    'remove',
    'move',
    'rename',
    'mkdir',
    'touch',
  ]),
});

export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** Windows above this keep a reserve of at most 20,000 tokens; smaller ones keep 20% of the window. */
const LARGE_WINDOW = 200_000;

/**
 * The trigger for a window: the window less a reserve for the next turns and the answer, 20% of the window, or for
 * windows above 200,000 tokens min(20%, 20,000) (a 1M-token window need not leave 200,000 tokens unused).
 */
export function defaultTrigger(contextWindow: number): number {
  const share = Math.floor(contextWindow * 0.2);
  return contextWindow - (contextWindow > LARGE_WINDOW ? Math.min(share, 20_000) : share);
}

/**
 * The default low-water mark as a share of the window. Measured on LoCoMo (README, Evaluation): 0.35 against 0.5
 * took compactions per 100k tokens appended from 29 to 22 at 8k and from 10 to 7 at 16k, prompt-cache reuse from
 * .962 to .968 at 8k, with readable evidence within .002; 0.25 read worse at 16k (.903 against .914).
 */
export const TARGET_SHARE = 0.35;
/** The default least a compaction must free, as a share of the window. */
export const MIN_FREED_SHARE = 0.1;

/** Tool results tier 2 leaves whole by default: the most recent calls' (see the compaction README, "Tiers"). */
export const KEEP_TOOL_USES = 3;
/** The smallest tool output tier 2 clears by default, in tokens: about twice its placeholder. */
export const CLEAR_TOOL_OUTPUT_MIN_TOKENS = 100;

/** Target and minimum freed for a window and trigger: the shares above, kept below the trigger so both hold. */
function defaultTargets(
  contextWindow: number,
  trigger: number,
  given: Partial<CompactionSettings>,
): Pick<CompactionSettings, 'targetTokens' | 'minFreedTokens'> {
  const targetTokens = given.targetTokens ?? Math.max(0, Math.min(Math.floor(contextWindow * TARGET_SHARE), trigger - 1));
  const minFreedTokens = given.minFreedTokens ?? Math.max(0, Math.min(Math.floor(contextWindow * MIN_FREED_SHARE), trigger - targetTokens));
  return { targetTokens, minFreedTokens };
}

export const DEFAULT_COMPACTION_SETTINGS: Readonly<CompactionSettings> = Object.freeze({
  contextWindow: DEFAULT_CONTEXT_WINDOW,
  trigger: defaultTrigger(DEFAULT_CONTEXT_WINDOW),
  targetTokens: Math.floor(DEFAULT_CONTEXT_WINDOW * TARGET_SHARE),
  minFreedTokens: Math.floor(DEFAULT_CONTEXT_WINDOW * MIN_FREED_SHARE),
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
  sessionGapMinutes: 30,
  sessionScope: 'none',
  keepSessions: 2,
  mode: 'delete',
  clearToolOutputs: true,
  keepToolUses: KEEP_TOOL_USES,
  excludeTools: Object.freeze([]) as readonly string[],
  clearToolOutputMinTokens: CLEAR_TOOL_OUTPUT_MIN_TOKENS,
  filesFooter: true,
  fileToolPatterns: DEFAULT_FILE_TOOL_PATTERNS,
  continuationMessage: false,
  background: false,
});

/** The compaction modes (`CompactionMode`). */
export const COMPACTION_MODES: readonly CompactionMode[] = ['delete', 'overlay'];

/**
 * The settings that are not numbers, and what each must be: one of a few words, true or false, or a list of tool
 * names. Every other setting is a number.
 */
const NON_NUMBERS: Partial<Record<keyof CompactionSettings, { choices: readonly string[] } | 'boolean' | 'names' | 'patterns' | 'note'>> = {
  sessionScope: { choices: SESSION_SCOPES },
  mode: { choices: COMPACTION_MODES },
  clearToolOutputs: 'boolean',
  excludeTools: 'names',
  filesFooter: 'boolean',
  fileToolPatterns: 'patterns',
  continuationMessage: 'note',
  background: 'boolean',
};

/** A given value has its setting's type; the error names the field (`compaction.excludeTools[1]` for a list item). */
function checkType(key: keyof CompactionSettings, value: unknown): void {
  const field = `compaction.${key}`;
  const kind = NON_NUMBERS[key];
  if (kind === 'boolean') {
    if (typeof value !== 'boolean') throw new InvalidConfigError(field, `must be true or false (got ${JSON.stringify(value)})`);
  } else if (kind === 'names') {
    if (!Array.isArray(value)) throw new InvalidConfigError(field, 'must be an array of tool names');
    value.forEach((name: unknown, i) => {
      if (typeof name !== 'string' || name.trim().length === 0) {
        throw new InvalidConfigError(`${field}[${i}]`, `must be a non-empty tool name (got ${JSON.stringify(name)})`);
      }
    });
  } else if (kind === 'patterns') {
    checkFileToolPatterns(field, value);
  } else if (kind === 'note') {
    if (typeof value !== 'boolean' && (typeof value !== 'string' || value.trim() === '')) {
      throw new InvalidConfigError(field, `must be true, false or a non-empty text (got ${JSON.stringify(value)})`);
    }
  } else if (kind !== undefined) {
    if (typeof value !== 'string' || !kind.choices.includes(value)) {
      throw new InvalidConfigError(field, `must be one of ${kind.choices.join(', ')} (got ${JSON.stringify(value) ?? String(value)})`);
    }
  } else if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidConfigError(field, 'must be a finite number');
  }
}

/** `{ read, modified }`, each a list of patterns holding at least one letter or digit (a pattern is matched by its words). */
function checkFileToolPatterns(field: string, value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidConfigError(field, 'must be an object { read: string[], modified: string[] }');
  }
  for (const key of Object.keys(value)) {
    if (key !== 'read' && key !== 'modified') throw new InvalidConfigError(`${field}.${key}`, 'unknown list (read or modified)');
  }
  for (const list of ['read', 'modified'] as const) {
    const patterns: unknown = (value as Record<string, unknown>)[list];
    if (!Array.isArray(patterns)) throw new InvalidConfigError(`${field}.${list}`, 'must be an array of tool-name patterns');
    patterns.forEach((pattern: unknown, i) => {
      if (typeof pattern !== 'string' || !/[\p{L}\p{N}]/u.test(pattern)) {
        throw new InvalidConfigError(`${field}.${list}[${i}]`, `must be a tool-name pattern with a letter or digit (got ${JSON.stringify(pattern)})`);
      }
    });
  }
}

/**
 * Merge user settings over the defaults and validate. When only `contextWindow` is given, the trigger
 * and the token budgets that exceed it follow the window (so a 4,000-token window works out of the box).
 */
export function resolveCompactionSettings(input: Partial<CompactionSettings> = {}): CompactionSettings {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidConfigError('compaction', 'must be an object of settings');
  for (const [key, value] of Object.entries(input)) {
    // Own keys only: `in` also finds what every object inherits (`__proto__`, `constructor`, `toString`).
    if (!Object.hasOwn(DEFAULT_COMPACTION_SETTINGS, key)) throw new InvalidConfigError(`compaction.${key}`, 'unknown setting');
    if (value !== undefined) checkType(key as keyof CompactionSettings, value);
  }
  const defined = Object.fromEntries(
    Object.entries(input)
      .filter(([, v]) => v !== undefined)
      // A list is copied, so a caller changing theirs later changes nothing here.
      .map(([k, v]) => [k, Array.isArray(v) ? Object.freeze([...v]) : k === 'fileToolPatterns' ? frozenPatterns(v as FileToolPatterns) : v]),
  ) as Partial<CompactionSettings>;
  const contextWindow = defined.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const scaled: Partial<CompactionSettings> = {
    trigger: defaultTrigger(contextWindow),
    // The verbatim tail and the chunks scale down with a small window so that compaction can make room. Chunks
    // up to the trigger's share: a compaction then usually takes one request (each request re-sends the prompt and
    // the summary so far; half the window took two at 8k, 1.10 summarizer input tokens per token compacted against
    // 1.02, README Performance).
    keepRecentTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.keepRecentTokens, Math.floor(contextWindow * 0.25)),
    chunkTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.chunkTokens, Math.floor(contextWindow * 0.8)),
    maxSummaryTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.maxSummaryTokens, Math.floor(contextWindow * 0.08)),
    transcriptSegmentTokens: Math.min(DEFAULT_COMPACTION_SETTINGS.transcriptSegmentTokens, Math.floor(contextWindow * 0.2)),
  };
  const merged: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...scaled, ...defined, contextWindow };
  const settings: CompactionSettings = { ...merged, ...defaultTargets(contextWindow, merged.trigger, defined) };
  validateCompactionSettings(settings);
  return settings;
}

function frozenPatterns(patterns: FileToolPatterns): FileToolPatterns {
  return Object.freeze({ read: Object.freeze([...patterns.read]), modified: Object.freeze([...patterns.modified]) });
}

function requireInt(settings: CompactionSettings, key: keyof typeof INTEGER_MINIMUMS, min: number): void {
  const value = settings[key];
  if (!Number.isInteger(value) || value < min) {
    throw new InvalidConfigError(`compaction.${key}`, `must be an integer >= ${min} (got ${value})`);
  }
}

function requireShare(settings: CompactionSettings, key: 'warnAt' | 'summarizerInputShare'): void {
  const value = settings[key];
  if (!(value > 0 && value <= 1)) throw new InvalidConfigError(`compaction.${key}`, `must be in (0, 1] (got ${value})`);
}

/** The integer settings and the least value each may take. */
const INTEGER_MINIMUMS = {
  contextWindow: 256,
  trigger: 1,
  targetTokens: 0,
  minFreedTokens: 0,
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
  keepSessions: 1,
  keepToolUses: 0,
  clearToolOutputMinTokens: 1,
} as const satisfies Partial<Record<keyof CompactionSettings, number>>;

export function validateCompactionSettings(settings: CompactionSettings): void {
  for (const [key, value] of Object.entries(settings)) checkType(key as keyof CompactionSettings, value);
  for (const [key, min] of Object.entries(INTEGER_MINIMUMS)) requireInt(settings, key as keyof typeof INTEGER_MINIMUMS, min);
  requireShare(settings, 'warnAt');
  requireShare(settings, 'summarizerInputShare');
  if (!(typeof settings.sessionGapMinutes === 'number' && settings.sessionGapMinutes >= 0 && Number.isFinite(settings.sessionGapMinutes))) {
    throw new InvalidConfigError('compaction.sessionGapMinutes', `must be a finite number >= 0, 0 for no gap rule (got ${settings.sessionGapMinutes})`);
  }
  if (settings.trigger > settings.contextWindow) {
    throw new InvalidConfigError('compaction.trigger', `must be <= contextWindow (${settings.contextWindow})`);
  }
  if (settings.targetTokens >= settings.trigger) {
    throw new InvalidConfigError('compaction.targetTokens', `must be < trigger (${settings.trigger}): a compaction comes down to it`);
  }
  if (settings.minFreedTokens > settings.trigger - settings.targetTokens) {
    throw new InvalidConfigError(
      'compaction.minFreedTokens',
      `must be <= trigger - targetTokens (${settings.trigger - settings.targetTokens}), or no compaction from the trigger could free it`,
    );
  }
  if (settings.keepRecentTokens >= settings.trigger) {
    throw new InvalidConfigError('compaction.keepRecentTokens', `must be < trigger (${settings.trigger}) so compaction can make room`);
  }
}
