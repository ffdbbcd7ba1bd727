/**
 * The compaction settings' one schema: a bad value of every kind is refused naming its field, the defaults come
 * from `DEFAULT_COMPACTION_SETTINGS` alone (what `{}` resolves to, what docs/configuration.md quotes), and the
 * `CompactionSettings` type is the schema's output.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import {
  type CompactionSettings,
  compactionSettingsSchema,
  DEFAULT_COMPACTION_SETTINGS,
  resolveCompactionSettings,
} from '../../src/compaction/compaction-settings.js';
import { compactionSettingsShape } from '../../src/compaction/compaction-settings-schema.js';
import { InvalidConfigError } from '../../src/errors.js';

function refusal(input: unknown): InvalidConfigError {
  try {
    resolveCompactionSettings(input as Partial<CompactionSettings>);
  } catch (error) {
    if (error instanceof InvalidConfigError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

/** A value of the wrong type for each setting: every setting is refused by its own rule, naming it. */
const WRONG_TYPE: Record<keyof CompactionSettings, unknown> = {
  contextWindow: '4000',
  trigger: null,
  targetTokens: true,
  minFreedTokens: [],
  warnAt: '0.5',
  keepRecentTokens: {},
  keepRecentMessages: '6',
  keepFirstTurns: false,
  chunkTokens: Number.NaN,
  maxSummaryTokens: Number.POSITIVE_INFINITY,
  clipFirst: '2',
  clipLast: null,
  clipBuffer: [2],
  toolOutputMaxLines: '50',
  summarizerInputShare: '0.8',
  transcriptSegmentTokens: true,
  sessionGapMinutes: '30',
  sessionScope: 2,
  keepSessions: '2',
  mode: null,
  clearToolOutputs: 'yes',
  keepToolUses: '3',
  excludeTools: 'memory_read',
  clearToolOutputMinTokens: {},
  filesFooter: 1,
  fileToolPatterns: ['read'],
  continuationMessage: 1,
  background: 'no',
};

describe('compaction settings schema', () => {
  it.each(Object.entries(WRONG_TYPE))('refuses %s of the wrong type naming it', (key, value) => {
    const error = refusal({ [key]: value });
    expect(error).toMatchObject({ code: 'invalid_config', field: `compaction.${key}` });
    expect(error.message).toMatch(new RegExp(`^Invalid config field compaction\\.${key}: must be `));
  });

  it('has a wrong-type case for every setting of the schema', () => {
    expect(Object.keys(WRONG_TYPE).sort()).toEqual(Object.keys(compactionSettingsShape).sort());
  });

  it.each([
    ['an integer below its least value', { chunkTokens: 63 }, 'compaction.chunkTokens', 'must be an integer >= 64 (got 63)'],
    ['a fraction for an integer', { keepFirstTurns: 0.5 }, 'compaction.keepFirstTurns', 'must be an integer >= 0 (got 0.5)'],
    ['a share out of (0, 1]', { warnAt: 1.5 }, 'compaction.warnAt', 'must be in (0, 1] (got 1.5)'],
    ['a negative gap', { sessionGapMinutes: -1 }, 'compaction.sessionGapMinutes', 'must be a finite number >= 0, 0 for no gap rule (got -1)'],
    ['a word not among the choices', { mode: 'soft' }, 'compaction.mode', 'must be one of delete, overlay (got "soft")'],
    ['a blank list item', { excludeTools: ['ok', ' '] }, 'compaction.excludeTools[1]', 'must be a non-empty tool name (got " ")'],
    [
      'a pattern without a letter',
      { fileToolPatterns: { read: ['__'], modified: [] } },
      'compaction.fileToolPatterns.read[0]',
      'must be a tool-name pattern with a letter or digit (got "__")',
    ],
    [
      'an unknown pattern list',
      { fileToolPatterns: { read: [], modified: [], shell: [] } },
      'compaction.fileToolPatterns.shell',
      'unknown list (read or modified)',
    ],
    ['a blank note', { continuationMessage: '  ' }, 'compaction.continuationMessage', 'must be true, false or a non-empty text (got "  ")'],
    ['an unknown setting', { window: 4_000 }, 'compaction.window', 'unknown setting'],
    ['not an object', 'big', 'compaction', 'must be an object of settings'],
  ])('refuses %s naming the field and the rule', (_kind, input, field, rule) => {
    expect(refusal(input)).toMatchObject({ field, message: `Invalid config field ${field}: ${rule}` });
  });

  it.each([
    [{ contextWindow: 4_000, trigger: 5_000 }, 'compaction.trigger', 'must be <= contextWindow (4000)'],
    [{ contextWindow: 16_000, targetTokens: 12_800 }, 'compaction.targetTokens', 'must be < trigger (12800): a compaction comes down to it'],
    [{ contextWindow: 16_000, targetTokens: 8_000, minFreedTokens: 5_000 }, 'compaction.minFreedTokens', 'must be <= trigger - targetTokens (4800)'],
    [{ contextWindow: 4_000, keepRecentTokens: 3_500 }, 'compaction.keepRecentTokens', 'must be < trigger (3200) so compaction can make room'],
  ])('refuses %j by a rule between settings, naming the setting to change', (input, field, rule) => {
    expect(refusal(input).message).toContain(`Invalid config field ${field}: ${rule}`);
  });

  it('resolves {} to DEFAULT_COMPACTION_SETTINGS, which the schema accepts as they are', () => {
    expect(resolveCompactionSettings({})).toEqual(DEFAULT_COMPACTION_SETTINGS);
    expect(compactionSettingsSchema.parse(DEFAULT_COMPACTION_SETTINGS)).toEqual(DEFAULT_COMPACTION_SETTINGS);
  });

  it('docs/configuration.md documents every setting, quoting the literal defaults of DEFAULT_COMPACTION_SETTINGS', () => {
    const documented = documentedDefaults(readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8'));
    expect([...documented.keys()].sort()).toEqual(Object.keys(DEFAULT_COMPACTION_SETTINGS).sort());
    let quoted = 0;
    for (const [key, value] of documented) {
      if (value === undefined) continue; // a default derived from the window, described in words
      expect(value, key).toEqual(DEFAULT_COMPACTION_SETTINGS[key as keyof CompactionSettings]);
      quoted++;
    }
    expect(quoted).toBeGreaterThan(20);
  });

  it('types CompactionSettings as the schema output', () => {
    expectTypeOf<CompactionSettings>().toEqualTypeOf<z.output<typeof compactionSettingsSchema>>();
    expectTypeOf<CompactionSettings['sessionScope']>().toEqualTypeOf<'none' | 'fixedCount' | 'tokenBudget'>();
    expectTypeOf<CompactionSettings['excludeTools']>().toEqualTypeOf<readonly string[]>();
  });
});

/** The settings table of docs/configuration.md: each setting with its default when the cell gives a literal. */
function documentedDefaults(markdown: string): Map<string, unknown> {
  const table = markdown.slice(markdown.indexOf('| setting | default | meaning |'));
  const rows = table.split('\n').slice(2);
  const defaults = new Map<string, unknown>();
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    const [names = '', given = ''] = row.split(' | ').map((cell) => cell.replace(/^\| /, ''));
    const keys = names.split(' / ').map((name) => name.replaceAll('`', ''));
    const values = given.replace(/ \(.*$/, '').split(' / ');
    keys.forEach((key, i) => defaults.set(key, literal(values.length === keys.length ? values[i]! : '')));
  }
  return defaults;
}

function literal(cell: string): unknown {
  const text = cell.replaceAll('`', '').trim();
  if (/^[\d,]+(\.\d+)?$/.test(text)) return Number(text.replaceAll(',', ''));
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^'[^']*'$/.test(text)) return text.slice(1, -1);
  if (text === '[]') return [];
  return undefined;
}
