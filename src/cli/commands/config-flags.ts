/**
 * `memfold config`'s setting flags, pure: one per compaction setting, its name in kebab case (`--keep-recent-tokens`),
 * with the short names `--window`, `--target`, `--min-freed` and `--session-gap`. Each value is read by the kind of
 * its setting's default (number, true|false, a comma-separated list, JSON for `--file-tool-patterns`); the settings'
 * own schema then checks it, so a flag's rule is the setting's rule.
 */
import { z } from 'zod';
import { DEFAULT_COMPACTION_SETTINGS } from '../../compaction/compaction-settings-defaults.js';
import type { CompactionSettings } from '../../compaction/compaction-settings.js';

type SettingKey = keyof CompactionSettings;

const kebab = (key: string) => key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

/** The short names of the settings operators change most. */
const SHORT: Readonly<Record<string, SettingKey>> = {
  window: 'contextWindow',
  target: 'targetTokens',
  'min-freed': 'minFreedTokens',
  'session-gap': 'sessionGapMinutes',
};

/** Flag name → setting. */
export const SETTING_FLAGS: Readonly<Record<string, SettingKey>> = Object.freeze({
  ...SHORT,
  ...Object.fromEntries((Object.keys(DEFAULT_COMPACTION_SETTINGS) as SettingKey[]).map((key) => [kebab(key), key])),
});

/** The flags `memfold config` takes, for the argument parser: every setting flag takes a value. */
export const CONFIG_FLAGS: Record<string, 'switch' | z.ZodType<string>> = {
  ...Object.fromEntries(Object.keys(SETTING_FLAGS).map((flag) => [flag, z.string()])),
  unset: z.string(),
  reset: 'switch',
  json: 'switch',
};

export const CONFIG_HELP: readonly string[] = [
  '  Each setting has a flag, its name in kebab case (--keep-recent-tokens for keepRecentTokens; --window, --target,',
  '  --min-freed and --session-gap for contextWindow, targetTokens, minFreedTokens and sessionGapMinutes); the settings',
  '  are those of docs/configuration.md. Lists are comma-separated (--exclude-tools bash,grep), switches true|false,',
  '  --file-tool-patterns JSON ({"read":[...],"modified":[...]}).',
  '  --unset <flag,flag>  put these settings back to their defaults (for this conversation)',
  '  --reset  remove every stored setting of the conversation',
  '  With no flag: print the stored settings and the settings memfold compacts the conversation with.',
  '  Stored in the live store: the application, compact, usage, worker and mcp all compact the conversation with them.',
];

/** A flag's text as its setting's value; a value of the wrong kind is passed on as text, for the schema to refuse. */
export function settingValue(key: SettingKey, raw: string): unknown {
  const model = DEFAULT_COMPACTION_SETTINGS[key];
  if (key === 'fileToolPatterns') {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return raw;
    }
  }
  if (Array.isArray(model))
    return raw
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  if (typeof model === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  if (typeof model === 'number') return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  return raw;
}

/** The flag of a setting, as the operator types it (the short name when it has one). */
export function flagOf(key: string): string {
  const short = Object.entries(SHORT).find(([, setting]) => setting === key)?.[0];
  return `--${short ?? kebab(key)}`;
}
