/**
 * `memfold config <conversation> [--window N --target N ... | --unset flags | --reset]`: a conversation's compaction
 * settings, stored in the live store for every process on it (`memfold.configure`). With no flag it prints the stored
 * settings and the settings the conversation is compacted with.
 */
import type { CompactionSettings } from '../../compaction/compaction-settings.js';
import type { SettingsChange } from '../../compaction/live-settings.js';
import { InvalidArgumentError, InvalidConfigError } from '../../errors.js';
import type { Memfold } from '../../memfold.js';
import { printJson, printStored, type Output } from '../output.js';
import { flagOf, SETTING_FLAGS, settingValue } from './config-flags.js';

export interface ConfigCommandOptions {
  /** The flags as parsed: setting flags with their text, `unset`, `reset`, `json`. */
  flags: Record<string, string | number | boolean>;
}

/** The change the flags ask for; `--unset` names flags (or settings) to put back. */
export function changeOf(flags: Record<string, string | number | boolean>): SettingsChange {
  const change: Record<string, unknown> = {};
  for (const [flag, raw] of Object.entries(flags)) {
    const key = Object.hasOwn(SETTING_FLAGS, flag) ? SETTING_FLAGS[flag] : undefined;
    if (key !== undefined && typeof raw === 'string') change[key] = settingValue(key, raw);
  }
  if (typeof flags.unset === 'string') {
    for (const name of flags.unset.split(',').map((item) => item.trim().replace(/^--/, ''))) {
      if (name === '') continue;
      const key = Object.hasOwn(SETTING_FLAGS, name) ? SETTING_FLAGS[name] : Object.values(SETTING_FLAGS).find((setting) => setting === name);
      if (key === undefined) throw new InvalidArgumentError('--unset', `${JSON.stringify(name)} is not a setting flag (memfold help config)`);
      if (key in change) throw new InvalidArgumentError('--unset', `${flagOf(key)} is both set and unset`);
      change[key] = undefined;
    }
  }
  return change as SettingsChange;
}

/** A setting refused as the flag that gave it: `--window: must be an integer >= 256 (got 100)`. */
function asFlagError(error: unknown): unknown {
  if (!InvalidConfigError.isInstance(error) || !error.field.startsWith('compaction.')) return error;
  const rule = error.message.slice(`Invalid config field ${error.field}: `.length);
  return new InvalidArgumentError(flagOf(error.field.slice('compaction.'.length)), rule);
}

function formatSettings(settings: Partial<CompactionSettings>): string[] {
  return Object.entries(settings).map(([key, value]) => `  ${key} ${JSON.stringify(value)}`);
}

export async function runConfig(memfold: Memfold, conversationId: string, options: ConfigCommandOptions, output: Output): Promise<number> {
  const { flags } = options;
  const change = changeOf(flags);
  const changing = Object.keys(change).length > 0;
  if (flags.reset === true && changing) throw new InvalidArgumentError('--reset', 'clears every setting: give it alone');
  let note: string | undefined;
  if (flags.reset === true) {
    note = (await memfold.resetSettings(conversationId)) ? 'stored settings removed' : 'no stored settings to remove';
  } else if (changing) {
    try {
      await memfold.configure(change, { conversationId });
    } catch (error) {
      throw asFlagError(error);
    }
    note = 'stored';
  }
  const { stored, settings } = await memfold.conversationSettings(conversationId);
  if (flags.json === true) {
    printJson(output, { conversationId, stored: stored ?? null, settings });
    return 0;
  }
  const lines = [
    ...(note !== undefined ? [`${note}.`] : []),
    stored === undefined || Object.keys(stored).length === 0
      ? `conversation ${conversationId}: no stored settings (every process compacts it with its own)`
      : `conversation ${conversationId}: stored settings, for every process on this store:`,
    ...formatSettings(stored ?? {}),
    'settings it is compacted with (over the defaults, or the flags and settings of the process that compacts it):',
    ...formatSettings(settings),
  ];
  printStored(output, lines.join('\n'));
  return 0;
}
