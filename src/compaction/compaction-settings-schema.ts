/**
 * The compaction settings' schema, pure: each setting's type and rule, and the rules between settings. The
 * `CompactionSettings` type is its output, so the type and the check cannot drift. The defaults are in
 * `compaction-settings-defaults.ts`; `compaction-settings.ts` merges them and parses with this schema.
 */
import type { z } from 'zod';
import type { CompactionMode } from '../persistence/persistence-provider.js';
import { onDemand, valueOnDemand, zod } from '../zod-on-demand.js';

/** How a refused value is shown: JSON where it has one (`"fixed"`, `null`), else its kind. */
const shown = (value: unknown): string => JSON.stringify(value) ?? String(value);

/**
 * How compaction treats earlier sessions (`compaction/sessions.ts` says where sessions begin):
 * - `none`: no scope; the verbatim tail is cut by tokens at a turn boundary (`keepRecentTokens`, `keepRecentMessages`).
 * - `fixedCount`: keep the last `keepSessions` sessions verbatim and compact every older one.
 * - `tokenBudget`: compact whole sessions, oldest first, until the rest fits the tail budget.
 */
export const SESSION_SCOPES = ['none', 'fixedCount', 'tokenBudget'] as const;
export type SessionScope = (typeof SESSION_SCOPES)[number];

/** The compaction modes (`CompactionMode`). */
export const COMPACTION_MODES = ['delete', 'overlay'] as const satisfies readonly CompactionMode[];

function choice<const T extends readonly [string, ...string[]]>(choices: T) {
  return zod().enum(choices, { error: (issue) => `must be one of ${choices.join(', ')} (got ${shown(issue.input)})` });
}

/** An integer setting and the least value it may take. */
function int(min: number) {
  const rule = (issue: { input?: unknown }) => `must be an integer >= ${min} (got ${String(issue.input)})`;
  return zod().number({ error: 'must be a finite number' }).int({ error: rule }).min(min, { error: rule });
}

/** A share of something: in (0, 1]. */
function share() {
  const rule = (issue: { input?: unknown }) => `must be in (0, 1] (got ${String(issue.input)})`;
  return zod().number({ error: 'must be a finite number' }).gt(0, { error: rule }).lte(1, { error: rule });
}

function flag() {
  return zod().boolean({ error: (issue) => `must be true or false (got ${shown(issue.input)})` });
}

/** A list of tool-name patterns, each with a letter or digit (a pattern is matched by its words). */
function patterns() {
  const rule = (issue: { input?: unknown }) => `must be a tool-name pattern with a letter or digit (got ${shown(issue.input)})`;
  const z = zod();
  const pattern = z.string({ error: rule }).regex(/[\p{L}\p{N}]/u, { error: rule });
  return z.array(pattern, { error: 'must be an array of tool-name patterns' }).readonly();
}

/** A tool's name as `excludeTools` lists it: not blank. */
function toolName() {
  const rule = (issue: { input?: unknown }) => `must be a non-empty tool name (got ${shown(issue.input)})`;
  return zod()
    .string({ error: rule })
    .refine((name) => name.trim() !== '', { error: rule });
}

/**
 * Tool-name patterns, matched case-insensitively against the words of a tool's name (split at `_`, `-`, `.`, spaces
 * and camelCase): `str_replace` matches `str_replace_editor`, `edit` matches `MultiEdit`, never `credit`. A tool that
 * matches both lists modifies.
 */
function fileToolPatternsSchema() {
  return zod().strictObject(
    { read: patterns(), modified: patterns() },
    {
      error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown list (read or modified)' : 'must be an object { read: string[], modified: string[] }'),
    },
  );
}
export type FileToolPatterns = z.output<ReturnType<typeof fileToolPatternsSchema>>;

/** Each setting's type and rule, documented where it is checked (the defaults: `DEFAULT_COMPACTION_SETTINGS`). */
const settingsShape = onDemand(() => ({
  /** Tokens the assistant's model accepts. */
  contextWindow: int(256),
  /**
   * Compaction runs when the history's tokens reach this. Default: the window less a reserve of 20% of it, or, for
   * windows above 200,000 tokens, less min(20% of it, 20,000).
   */
  trigger: int(1),
  /**
   * The low-water mark: a compaction cuts the verbatim tail so that the history comes down to about this many tokens
   * (the clip-archive counted at its largest), not just under the trigger, so that compactions are fewer and larger.
   * Default: TARGET_SHARE of the window (below the trigger).
   */
  targetTokens: int(0),
  /**
   * A compaction that would free fewer tokens than this does nothing (`skipReason: 'too_little_to_free'`) unless it
   * is forced or the history has reached the window. Default: MIN_FREED_SHARE of the window.
   */
  minFreedTokens: int(0),
  /** Share of the window at which a context warning is reported. */
  warnAt: share(),
  /** Verbatim tail kept by tokens; the cut lands on a turn boundary. */
  keepRecentTokens: int(0),
  /** Verbatim tail kept by count (whichever keeps more of keepRecentTokens/keepRecentMessages wins, within budget). */
  keepRecentMessages: int(0),
  /** Opening turns kept verbatim. */
  keepFirstTurns: int(0),
  /** Tokens per chunk sent to the summarizer. */
  chunkTokens: int(64),
  /** Tokens per summary batch. */
  maxSummaryTokens: int(16),
  /** Batches shown at the head of the clip-archive. */
  clipFirst: int(0),
  /** Batches shown at the tail of the clip-archive. */
  clipLast: int(1),
  /** Extra frontier batches tolerated before re-summarization into a higher depth. */
  clipBuffer: int(0),
  /** Tool outputs in the verbatim tail are cut to this many lines (the full text is archived). */
  toolOutputMaxLines: int(1),
  /** A summarizer request never exceeds this share of the summarizer's window. */
  summarizerInputShare: share(),
  /** Tokens per verbatim transcript segment in the archive (the retrieval unit of memory_read). */
  transcriptSegmentTokens: int(16),
  /**
   * Messages without a session id start a new session after a pause longer than this many minutes (0: never; the
   * session then changes only where the messages' session ids do). Default 30, the inactivity timeout web analytics
   * use for a visit: a pause of half an hour is a new sitting, a slow answer or tool run is not.
   */
  sessionGapMinutes: zod()
    .number({ error: 'must be a finite number' })
    .min(0, { error: (issue) => `must be a finite number >= 0, 0 for no gap rule (got ${String(issue.input)})` }),
  /** The scope over earlier sessions (`SessionScope`). Default `none`: the token-based tail. */
  sessionScope: choice(SESSION_SCOPES),
  /** The sessions `fixedCount` keeps verbatim, the newest included (other scopes do not read it). Default 2. */
  keepSessions: int(1),
  /**
   * How a compaction takes the archived messages out of the live history: `delete` (default) deletes their rows;
   * `overlay` keeps them, marked compacted by the operation, hidden from the live history and readable with
   * `loadHistory(id, { includeCompacted: true })`. Recorded on each operation, so whoever finishes it commits it so.
   */
  mode: choice(COMPACTION_MODES),
  /**
   * Tier 2, before summarizing: replace old tool outputs in the live rows by a placeholder naming the archive label
   * that holds them verbatim (`clear-tool-outputs.ts`). Summarizing (tier 3) runs only when that is not enough.
   */
  clearToolOutputs: flag(),
  /** Tier 2 leaves whole the results of this many most recent tool calls. */
  keepToolUses: int(0),
  /** Tool names (the call's function name) whose outputs tier 2 never clears. */
  excludeTools: zod().array(toolName(), { error: 'must be an array of tool names' }).readonly(),
  /** Tier 2 clears only outputs of at least this many tokens: a placeholder costs about 50, so smaller ones free nothing. */
  clearToolOutputMinTokens: int(1),
  /**
   * Every summary batch ends with the files its messages' tool calls read and modified (`files-footer.ts`), whatever
   * the summarizer wrote, so file knowledge survives any summarizer. Default true.
   */
  filesFooter: flag(),
  /** Which tools read and which modify files, as words of the tool's name (`FileToolPatterns`). */
  fileToolPatterns: fileToolPatternsSchema().readonly(),
  /**
   * After a compaction, `context()` ends with a short system note (`kind: 'continuation'`, never stored) saying the
   * history was compacted, how to reach it with memory_read, and to go on without asking again, until the next user
   * message: `true` for DEFAULT_CONTINUATION_MESSAGE, a string for your own text, `false` (default) for none. At the
   * end of the context, so the prompt before it stays the same (a provider's prompt cache keeps it).
   */
  continuationMessage: zod().custom<boolean | string>((value) => typeof value === 'boolean' || (typeof value === 'string' && value.trim() !== ''), {
    error: (issue) => `must be true, false or a non-empty text (got ${shown(issue.input)})`,
  }),
  /**
   * Compact outside the caller's turn: an append that takes the context past the trigger queues a job (pg-boss on
   * PostgreSQL, run by `memfold worker`; in this process on PGlite or in memory) instead of waiting for `compact`, and
   * `context` compacts at once with the offline summarizer only when the context reached the window. Default false.
   */
  background: flag(),
}));
type SettingsShape = ReturnType<typeof settingsShape>;

/** The settings' schemas by name, built (and zod loaded) when a setting is first checked. */
export const compactionSettingsShape: SettingsShape = valueOnDemand(settingsShape);

const objectError = { error: (issue: { code?: string }) => (issue.code === 'unrecognized_keys' ? 'unknown setting' : 'must be an object of settings') };

/** Settings as a caller gives them: any subset, each checked alone (`undefined` means not given). */
export const compactionSettingsInputSchema = valueOnDemand(() => zod().strictObject(settingsShape(), objectError).partial());

/** The rules between settings: each names the setting it refuses, so the error says which to change. */
function crossFieldRules(settings: z.output<z.ZodObject<SettingsShape>>, ctx: z.RefinementCtx): void {
  const refuse = (key: keyof SettingsShape, message: string) => ctx.addIssue({ code: 'custom', path: [key], message });
  const { contextWindow, trigger, targetTokens, minFreedTokens, keepRecentTokens } = settings;
  if (trigger > contextWindow) refuse('trigger', `must be <= contextWindow (${contextWindow})`);
  else if (targetTokens >= trigger) refuse('targetTokens', `must be < trigger (${trigger}): a compaction comes down to it`);
  else if (minFreedTokens > trigger - targetTokens) {
    refuse('minFreedTokens', `must be <= trigger - targetTokens (${trigger - targetTokens}), or no compaction from the trigger could free it`);
  } else if (keepRecentTokens >= trigger) refuse('keepRecentTokens', `must be < trigger (${trigger}) so compaction can make room`);
}

/** Complete settings: every setting, each by its rule, and the rules between them. */
export const compactionSettingsSchema = valueOnDemand(() => zod().strictObject(settingsShape(), objectError).superRefine(crossFieldRules));

/** The settings compaction runs with: the schema's output, so no setting is typed in one place and checked in another. */
export type CompactionSettings = z.output<typeof compactionSettingsSchema>;
export type { CompactionMode };
