/**
 * The full evaluation datasets (`../shared/data`, beside the checkout, or `MEMFOLD_SHARED_DATA` for a checkout
 * elsewhere): tests that need all of a dataset run when it is there, and always in CI, where a missing folder
 * fails them instead of skipping them. Small excerpts every clone has live in `test/fixtures/`. The benchmarks
 * read the same folder.
 */
import { existsSync } from 'node:fs';
import { describe } from 'vitest';

export const SHARED_DATA = process.env.MEMFOLD_SHARED_DATA
  ? `${process.env.MEMFOLD_SHARED_DATA.replace(/\/+$/, '')}/`
  : new URL('../../../shared/data/', import.meta.url).pathname;
export const LOCOMO_FILE = `${SHARED_DATA}locomo/locomo10.json`;
export const TAU_BENCH_FILE = `${SHARED_DATA}agent-traces/tau-bench/gpt-4o-airline.json`;
/** Five runs of the τ-bench file (MIT): the first and the four longest. */
export const TAU_BENCH_EXCERPT = new URL('../fixtures/tau-bench/gpt-4o-airline-excerpt.json', import.meta.url).pathname;

const present = existsSync(LOCOMO_FILE) && existsSync(TAU_BENCH_FILE);

/** `describe` for a full-dataset suite: run with the data or in CI, else reported as skipped. */
export function describeWithSharedData(name: string, suite: () => void | Promise<void>): void {
  describe.skipIf(!present && process.env.CI !== 'true')(name, suite);
}
