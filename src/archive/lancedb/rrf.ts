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
 * With the lexical hashing embedder, full text alone: plain RRF with hashing vectors was measured worse than BM25
 * alone; at a weight of 0.01 (vectors only breaking ties and filling in rows full text missed) memory_read's
 * readable evidence on LoCoMo at 8k was .890 against .888 without vectors, while the vector search (and the deeper
 * lists fusion needs) took its time at 1M rows to 34 ms, against 12-14 ms without (docs/memory-read.md, memory_read ablation;
 * README Performance). A weight above 0 turns vectors back on.
 */
export const HASHING_FUSION_WEIGHTS = Object.freeze({ fullText: 1, vector: 0 });
/**
 * A semantic embedder finds what words miss, but a segment's vector says less than its words: full text leads. With
 * GloVe word vectors (the one semantic embedder measurable offline), memory_read's readable evidence on LongMemEval
 * fell from .928 to .885 at a vector weight of 0.3 and to .782 at 1 (vector-near segments push the evidence's out of
 * the candidates), LoCoMo's moved by .001; at 0.1 neither moved (docs/memory-read.md, "Meaning beside words").
 * Meaning is weighed where it helped instead: memory_read's ranking of the candidates' messages (`semanticWeight`).
 */
export const SEMANTIC_FUSION_WEIGHTS = Object.freeze({ fullText: 1, vector: 0.1 });

/** Default weights by embedder: {@link HASHING_FUSION_WEIGHTS} when the id starts with `hashing`, else {@link SEMANTIC_FUSION_WEIGHTS}. */
export function defaultFusionWeights(embedderId: string): { fullText: number; vector: number } {
  return { ...(embedderId.startsWith('hashing') ? HASHING_FUSION_WEIGHTS : SEMANTIC_FUSION_WEIGHTS) };
}

/**
 * Candidates each ranking gives for a search of `limit` hits: with both rankings on, a deeper list than the limit so
 * that fusion can reorder (4 x limit, at least 20, at most 200); a ranking alone needs no more than the limit.
 */
export function candidateDepth(limit: number, weights: { fullText: number; vector: number }): number {
  return weights.fullText > 0 && weights.vector > 0 ? Math.min(Math.max(limit * 4, 20), 200) : limit;
}
