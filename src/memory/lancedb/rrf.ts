/**
 * Weighted reciprocal rank fusion. Pure.
 *
 * score(d) = sum over rankings r of weight_r / (k + rank_r(d)), rank starting at 1; a ranking that misses d adds 0.
 */

/** The usual RRF constant: large enough that rank 1 does not drown the rest. */
export const RRF_K = 60;

export interface Ranking {
  /** Ids, best first. Duplicates after the first occurrence are ignored. */
  ids: readonly string[];
  weight: number;
}

export interface FusedId {
  id: string;
  score: number;
}

/**
 * Fuse rankings, best first. Equal scores are ordered by the first ranking that holds the id (so the first
 * ranking given leads among equals), then by the position there, then by id: the order is deterministic.
 */
export function fuseRankings(rankings: readonly Ranking[], k = RRF_K): FusedId[] {
  const scores = new Map<string, { score: number; tie: [number, number] }>();
  rankings.forEach((ranking, which) => {
    const seen = new Set<string>();
    for (const id of ranking.ids) {
      if (seen.has(id)) continue;
      seen.add(id);
      const index = seen.size - 1;
      const contribution = ranking.weight / (k + index + 1);
      const current = scores.get(id);
      if (current === undefined) scores.set(id, { score: contribution, tie: [which, index] });
      else current.score += contribution;
    }
  });
  return [...scores.entries()]
    .sort(([idA, a], [idB, b]) => b.score - a.score || a.tie[0] - b.tie[0] || a.tie[1] - b.tie[1] || (idA < idB ? -1 : idA > idB ? 1 : 0))
    .map(([id, { score }]) => ({ id, score }));
}

/**
 * With a lexical hashing embedder, full text must lead (plain RRF was measured worse than BM25 alone). With k = 60
 * the gap between full-text ranks 1 and 2 is only 1/61 - 1/62 = 0.00026, so a vector weight of 0.3 still lets vector
 * agreement reorder the full-text top (measured in test/memory/lancedb-archive-search.test.ts: a rare name that BM25
 * ranks first fell to 7th). At 0.01 the vector ranking only breaks ties and fills in rows full text does not find.
 */
export const HASHING_FUSION_WEIGHTS = Object.freeze({ fullText: 1, vector: 0.01 });
/** A semantic embedder finds what words miss: both rankings count the same. */
export const SEMANTIC_FUSION_WEIGHTS = Object.freeze({ fullText: 1, vector: 1 });

/** Default weights by embedder: {@link HASHING_FUSION_WEIGHTS} when the id starts with `hashing`, else {@link SEMANTIC_FUSION_WEIGHTS}. */
export function defaultFusionWeights(embedderId: string): { fullText: number; vector: number } {
  return { ...(embedderId.startsWith('hashing') ? HASHING_FUSION_WEIGHTS : SEMANTIC_FUSION_WEIGHTS) };
}
