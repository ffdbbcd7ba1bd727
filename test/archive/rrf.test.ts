import { describe, expect, it } from 'vitest';
import { candidateDepth, defaultFusionWeights, fuseRankings, RRF_K } from '../../src/archive/lancedb/rrf.js';

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

  it('with the hashing embedder, ranks by full text alone', () => {
    expect(defaultFusionWeights('hashing-384')).toEqual({ fullText: 1, vector: 0 });
  });

  it('asks each ranking for more candidates than the limit only when two are fused', () => {
    expect(candidateDepth(5, { fullText: 1, vector: 1 })).toBe(20);
    expect(candidateDepth(20, { fullText: 1, vector: 0.01 })).toBe(80);
    expect(candidateDepth(50, { fullText: 1, vector: 1 })).toBe(200);
    expect(candidateDepth(20, { fullText: 1, vector: 0 })).toBe(20);
    expect(candidateDepth(7, { fullText: 0, vector: 1 })).toBe(7);
  });

  it('gives a semantic embedder the measured vector weight, 0.1: full text leads, vectors add what it missed', () => {
    expect(defaultFusionWeights('openai:text-embedding-3-small')).toEqual({ fullText: 1, vector: 0.1 });
  });
});
