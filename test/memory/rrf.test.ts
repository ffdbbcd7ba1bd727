import { describe, expect, it } from 'vitest';
import { defaultFusionWeights, fuseRankings, RRF_K } from '../../src/memory/lancedb/rrf.js';

describe('weighted reciprocal rank fusion', () => {
  it('scores sum weight / (60 + rank) over the rankings that hold an id', () => {
    const fused = fuseRankings([
      { ids: ['a', 'b'], weight: 1 },
      { ids: ['b', 'c'], weight: 0.5 },
    ]);
    expect(RRF_K).toBe(60);
    expect(fused.map((hit) => hit.id)).toEqual(['b', 'a', 'c']);
    expect(fused[0]?.score).toBeCloseTo(1 / 62 + 0.5 / 61, 12);
    expect(fused[1]?.score).toBeCloseTo(1 / 61, 12);
    expect(fused[2]?.score).toBeCloseTo(0.5 / 62, 12);
  });

  it('breaks equal scores by the first ranking, then position, then id; ignores repeated ids', () => {
    const fused = fuseRankings([
      { ids: ['x', 'x', 'y'], weight: 1 },
      { ids: ['z', 'w'], weight: 1 },
    ]);
    expect(fused.map((hit) => hit.id)).toEqual(['x', 'z', 'y', 'w']);
    expect(fuseRankings([{ ids: [], weight: 1 }])).toEqual([]);
  });

  it('with the hashing defaults, full text order survives any vector ranking among the top full-text hits', () => {
    const weights = defaultFusionWeights('hashing-384');
    expect(weights).toEqual({ fullText: 1, vector: 0.01 });
    const fullText = Array.from({ length: 20 }, (_, i) => `f${i}`);
    // Vectors rank the full-text hits in reverse, and add rows full text never found.
    const vector = ['v0', 'v1', ...[...fullText].reverse()];
    const fused = fuseRankings([
      { ids: fullText, weight: weights.fullText },
      { ids: vector, weight: weights.vector },
    ]).map((hit) => hit.id);
    expect(fused.slice(0, 20)).toEqual(fullText);
    expect(fused.slice(20)).toEqual(['v0', 'v1']);
  });

  it('gives a semantic embedder equal weights', () => {
    expect(defaultFusionWeights('openai:text-embedding-3-small')).toEqual({ fullText: 1, vector: 1 });
  });
});
