/**
 * Every default of the compaction settings, pure, and nothing else: `DEFAULT_COMPACTION_SETTINGS` (what
 * `resolveCompactionSettings({})` returns, quoted by docs/configuration.md) and the rules that scale the defaults
 * to a given window. No other file supplies a default.
 */
import type { CompactionSettings, FileToolPatterns } from './compaction-settings-schema.js';

/** The tool names of coding agents (SWE-agent, OpenHands, Claude Code, Gemini CLI, Cline, Codex). */
export const DEFAULT_FILE_TOOL_PATTERNS: FileToolPatterns = Object.freeze({
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

/** The settings of `resolveCompactionSettings({})`: the one place each default is written. */
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
  excludeTools: Object.freeze([]),
  clearToolOutputMinTokens: CLEAR_TOOL_OUTPUT_MIN_TOKENS,
  filesFooter: true,
  fileToolPatterns: DEFAULT_FILE_TOOL_PATTERNS,
  continuationMessage: false,
  background: false,
});

/**
 * The defaults for a window: the trigger follows it, and the verbatim tail and the chunks scale down with a small
 * window so that compaction can make room. Chunks up to the trigger's share: a compaction then usually takes one
 * request (each request re-sends the prompt and the summary so far; half the window took two at 8k, 1.10 summarizer
 * input tokens per token compacted against 1.02, README Performance).
 */
export function defaultsForWindow(contextWindow: number): CompactionSettings {
  const d = DEFAULT_COMPACTION_SETTINGS;
  return {
    ...d,
    contextWindow,
    trigger: defaultTrigger(contextWindow),
    keepRecentTokens: Math.min(d.keepRecentTokens, Math.floor(contextWindow * 0.25)),
    chunkTokens: Math.min(d.chunkTokens, Math.floor(contextWindow * 0.8)),
    maxSummaryTokens: Math.min(d.maxSummaryTokens, Math.floor(contextWindow * 0.08)),
    transcriptSegmentTokens: Math.min(d.transcriptSegmentTokens, Math.floor(contextWindow * 0.2)),
  };
}

/** Target and minimum freed for a window and trigger when not given: the shares above, kept below the trigger so both hold. */
export function defaultTargets(
  contextWindow: number,
  trigger: number,
  given: Partial<Pick<CompactionSettings, 'targetTokens' | 'minFreedTokens'>>,
): Pick<CompactionSettings, 'targetTokens' | 'minFreedTokens'> {
  const targetTokens = given.targetTokens ?? Math.max(0, Math.min(Math.floor(contextWindow * TARGET_SHARE), trigger - 1));
  const minFreedTokens = given.minFreedTokens ?? Math.max(0, Math.min(Math.floor(contextWindow * MIN_FREED_SHARE), trigger - targetTokens));
  return { targetTokens, minFreedTokens };
}
