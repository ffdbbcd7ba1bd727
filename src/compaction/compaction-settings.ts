/**
 * The compaction settings resolved: what a caller gives, checked by the schema (`compaction-settings-schema.ts`),
 * merged over the defaults for its window (`compaction-settings-defaults.ts`), and the whole checked again with the
 * rules between settings. Errors are InvalidConfigError naming `compaction.<key>` (`compaction.excludeTools[1]`
 * for a list item).
 */
import { parseWithSchema } from '../conversation/schema-issues.js';
import { InvalidConfigError } from '../errors.js';
import { defaultsForWindow, defaultTargets, DEFAULT_CONTEXT_WINDOW } from './compaction-settings-defaults.js';
import { compactionSettingsInputSchema, compactionSettingsSchema, type CompactionSettings } from './compaction-settings-schema.js';

export {
  COMPACTION_MODES,
  SESSION_SCOPES,
  compactionSettingsInputSchema,
  compactionSettingsSchema,
  type CompactionMode,
  type CompactionSettings,
  type FileToolPatterns,
  type SessionScope,
} from './compaction-settings-schema.js';
export {
  CLEAR_TOOL_OUTPUT_MIN_TOKENS,
  DEFAULT_COMPACTION_SETTINGS,
  DEFAULT_CONTEXT_WINDOW,
  DEFAULT_FILE_TOOL_PATTERNS,
  KEEP_TOOL_USES,
  MIN_FREED_SHARE,
  TARGET_SHARE,
  defaultTrigger,
} from './compaction-settings-defaults.js';

/** The settings by the name of the original design's contract (`CompactionConfig`); the same type. */
export type CompactionConfig = CompactionSettings;

const asConfigError = { prefix: 'compaction', toError: (field: string, rule: string) => new InvalidConfigError(field, rule) };

/**
 * Merge user settings over the defaults and validate. When only `contextWindow` is given, the trigger
 * and the token budgets that exceed it follow the window (so a 4,000-token window works out of the box).
 * Lists are copied and frozen, so a caller changing theirs later changes nothing here.
 */
export function resolveCompactionSettings(input: Partial<CompactionSettings> = {}): CompactionSettings {
  const parsed = parseWithSchema(compactionSettingsInputSchema, input, asConfigError);
  // A setting given as undefined (spread from optional options) is not given.
  const given = Object.fromEntries(Object.entries(parsed).filter(([, value]) => value !== undefined)) as Partial<CompactionSettings>;
  const merged: CompactionSettings = { ...defaultsForWindow(given.contextWindow ?? DEFAULT_CONTEXT_WINDOW), ...given };
  return validateCompactionSettings({ ...merged, ...defaultTargets(merged.contextWindow, merged.trigger, given) });
}

/** Complete settings checked, each by its rule and the rules between them; returns them parsed (lists frozen). */
export function validateCompactionSettings(settings: CompactionSettings): CompactionSettings {
  return parseWithSchema(compactionSettingsSchema, settings, asConfigError);
}
