/** `memfold usage`'s text: the count, and the calibration factor only when the assistant's usage set one. */
import { describe, expect, it } from 'vitest';
import { formatUsage } from '../../src/cli/commands/usage.js';
import type { ContextUsage } from '../../src/compaction/compactor.js';
import { resolveCompactionSettings } from '../../src/compaction/compaction-settings.js';

const settings = resolveCompactionSettings({ contextWindow: 2_000 });
const usage: ContextUsage = {
  conversationId: 'c',
  tokens: 1_200,
  calibration: 1,
  contextWindow: 2_000,
  percent: 60,
  trigger: settings.trigger,
  targetTokens: settings.targetTokens,
  warnAt: settings.warnAt,
  warnTokens: 1_400,
  next: 'none',
};

describe('formatUsage', () => {
  it('names the calibration factor when one is stored, and says nothing of it otherwise', () => {
    const plain = formatUsage(usage, settings);
    expect(plain.split('\n')[0]).toBe('conversation c: 1200 tokens of a 2000-token window (60.0%)');
    const calibrated = formatUsage({ ...usage, tokens: 1_500, percent: 75, calibration: 1.25 }, settings);
    expect(calibrated.split('\n')[0]).toBe(
      "conversation c: 1500 tokens of a 2000-token window (75.0%, memfold's count × 1.250 as the assistant's reported usage calibrated it)",
    );
  });
});
