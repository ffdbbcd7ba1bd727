/**
 * A check that the harness reads LoCoMo right: its truncate-oldest and head+tail baselines give the
 * figures of the data README (chars/4 of `speaker: text` per turn, whole turns kept).
 */
import { beforeAll, expect, it } from 'vitest';
import { loadLocomoDataset } from '../../src/eval/datasets/locomo-dataset.js';
import { aggregate } from '../../src/eval/metrics.js';
import { scoreBaseline } from '../../src/eval/score-baselines.js';
import type { BaselineName } from '../../src/eval/baselines.js';
import { LOCOMO_FILE, describeWithSharedData } from '../support/shared-data.js';

describeWithSharedData('LoCoMo baselines reproduce the data README', () => {
  // Loaded before the tests, not while collecting them: without the data the suite is skipped, not failed.
  let dataset: Awaited<ReturnType<typeof loadLocomoDataset>>;
  beforeAll(async () => {
    dataset = await loadLocomoDataset(LOCOMO_FILE);
  });
  const survival = (name: BaselineName, window: number) =>
    aggregate(dataset.conversations.flatMap((c) => scoreBaseline(c, name, window).outcomes)).survivalStrict;

  it('counts the skipped evidence the data README describes', () => {
    expect(dataset.skipped).toEqual({ malformedEvidence: 9, withoutEvidence: 4, onlyMalformedEvidence: 5 });
    expect(dataset.conversations.reduce((n, c) => n + c.questions.length, 0)).toBe(1986 - 4 - 5);
  });

  it('truncate-oldest keeps every evidence turn of 0.19 / 0.37 / 0.77 of the questions at 4k / 8k / 16k, 1.00 at 32k', () => {
    expect(survival('truncate-oldest', 4_000)).toBeCloseTo(0.1907, 4);
    expect(survival('truncate-oldest', 8_000)).toBeCloseTo(0.3652, 4);
    expect(survival('truncate-oldest', 16_000)).toBeCloseTo(0.7699, 4);
    expect(survival('truncate-oldest', 32_000)).toBe(1);
    for (const [window, figure] of [
      [4_000, 0.19],
      [8_000, 0.37],
      [16_000, 0.77],
    ] as const) {
      expect(Math.abs(survival('truncate-oldest', window) - figure)).toBeLessThanOrEqual(0.01);
    }
  });

  it('head+tail (first 2k, last 6k) keeps 0.40 at 8k', () => {
    expect(Math.abs(survival('head+tail', 8_000) - 0.4)).toBeLessThanOrEqual(0.01);
  });
});
