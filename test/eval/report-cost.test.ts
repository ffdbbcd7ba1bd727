/** The report's cost table: the summarizer's cost in US dollars per method, summed from each compaction's costUsd. */
import { describe, expect, it } from 'vitest';
import { initialResult } from '../../src/compaction/compaction-result.js';
import { addCompaction, costFigures, sumCosts, zeroCost } from '../../src/eval/method-cost.js';
import { formatAgenticReport } from '../../src/eval/report.js';
import type { AgenticMethodResult } from '../../src/eval/run-agentic-eval.js';

const compacted = (costUsd: number | null) => ({ ...initialResult([], 1_000), status: 'compacted' as const, tokensAfter: 400, modelCalls: 2, costUsd });

describe('summarizer USD', () => {
  it('sums priced compactions and counts the unpriced beside them', () => {
    const cost = zeroCost();
    addCompaction(cost, compacted(0.0012));
    addCompaction(cost, compacted(0.0003));
    addCompaction(cost, compacted(null));
    expect(cost).toMatchObject({ compactions: 3, unpricedCompactions: 1 });
    expect(cost.summarizerUsd).toBeCloseTo(0.0015, 12);
    expect(sumCosts([cost, cost]).unpricedCompactions).toBe(2);
  });

  it('shows in the cost table, in dollars, with the unpriced compactions; — for methods without a summarizer', () => {
    const memfold = zeroCost();
    addCompaction(memfold, compacted(0.0012));
    addCompaction(memfold, compacted(null));
    const metrics = { runs: 1, toolPairs: 0, pairIntegrity: 1, values: 0, valueInPrompt: 0, valueViaMemory: 0, valueAvailability: 0 };
    const result = (method: AgenticMethodResult['method'], cost: typeof memfold): AgenticMethodResult => ({
      window: 8_000,
      method,
      metrics,
      cost,
      figures: costFigures(cost, method === 'memfold'),
      outcomes: [],
    });
    const report = formatAgenticReport({
      dataset: 'd',
      windows: [8_000],
      runs: 1,
      results: [result('memfold', memfold), result('truncate-oldest', zeroCost())],
    });
    const lines = report.split('\n');
    const at = lines.findIndex((line) => line.startsWith('| method | prompt / raw'));
    const column = lines[at]!.split(' | ').indexOf('summarizer USD');
    expect(column).toBeGreaterThan(0);
    const cell = (method: string) =>
      lines
        .slice(at)
        .find((line) => line.startsWith(`| ${method} |`))!
        .split(' | ')[column];
    expect(cell('memfold')).toBe('$0.0012 (1 unpriced)');
    expect(cell('truncate-oldest')).toBe('—');
    expect(report).toContain('summarizer USD: ');
  });
});
