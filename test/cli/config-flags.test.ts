/**
 * `memfold config`'s flags, parsed: one per setting (kebab case, and the short names), each value read by its
 * setting's kind; `--unset` names flags or settings; bad flags and values refused naming the flag, before anything opens.
 */
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args.js';
import { changeOf } from '../../src/cli/commands/config.js';
import { SETTING_FLAGS } from '../../src/cli/commands/config-flags.js';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/compaction/compaction-settings-defaults.js';

const flagsOf = (...argv: string[]) => (parseArgs(['config', 'c', ...argv]) as { flags: Record<string, string | number | boolean> }).flags;

describe('memfold config flags', () => {
  it('has a flag for every setting', () => {
    expect(new Set(Object.values(SETTING_FLAGS))).toStrictEqual(new Set(Object.keys(DEFAULT_COMPACTION_SETTINGS)));
  });

  it("reads each value by its setting's kind", () => {
    const change = changeOf(
      flagsOf(
        '--window=4096',
        '--warn-at',
        '0.5',
        '--session-scope',
        'tokenBudget',
        '--background',
        'true',
        '--exclude-tools',
        'bash, grep,',
        '--continuation-message',
        'Carry on.',
        '--file-tool-patterns',
        '{"read":["cat"],"modified":[]}',
      ),
    );
    expect(change).toStrictEqual({
      contextWindow: 4_096,
      warnAt: 0.5,
      sessionScope: 'tokenBudget',
      background: true,
      excludeTools: ['bash', 'grep'],
      continuationMessage: 'Carry on.',
      fileToolPatterns: { read: ['cat'], modified: [] },
    });
    // A value of the wrong kind goes on as text, for the settings' schema to refuse by its rule.
    expect(changeOf(flagsOf('--trigger', 'many', '--files-footer', 'yes'))).toStrictEqual({ trigger: 'many', filesFooter: 'yes' });
  });

  it('--unset takes flags or setting names, and refuses others and a setting both set and unset', () => {
    expect(changeOf(flagsOf('--unset', 'target,--keep-sessions,sessionScope'))).toStrictEqual({
      targetTokens: undefined,
      keepSessions: undefined,
      sessionScope: undefined,
    });
    expect(() => changeOf(flagsOf('--unset', 'windw'))).toThrow('--unset: "windw" is not a setting flag');
    expect(() => changeOf(flagsOf('--window', '4096', '--unset', 'window'))).toThrow('--unset: --window is both set and unset');
  });

  it('refuses an unknown flag and a setting flag without a value', () => {
    expect(() => flagsOf('--windw', '1')).toThrow(/--windw: is not an option of "config"/);
    expect(() => flagsOf('--window')).toThrow('--window: needs a value');
  });
});
