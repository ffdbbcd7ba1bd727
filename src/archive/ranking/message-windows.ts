/**
 * Best-first windows over a run of messages, pure: each message is scored with its neighbours' words (a
 * question's words are often split over a question and its reply), then the best messages are shown with
 * their neighbours, best first, until a token budget is spent. Windows that touch are merged into one block,
 * so no message is shown twice.
 */

export interface WindowItem {
  /** Place in the conversation; items whose positions differ by 1 are neighbours. */
  position: number;
  /** Tokens the item costs when shown. */
  tokens: number;
  /**
   * Items of one group (the sentences of one long message) share what they show once, whichever of them comes
   * first (the message's speaker and time): `groupTokens`, counted with the group's first item shown.
   */
  group?: number;
  groupTokens?: number;
}

export interface WindowOptions {
  /** Neighbours shown on each side of a matching message. */
  radius: number;
  /** Tokens all blocks may take together. */
  budget: number;
  /** Tokens a new block costs beyond its items (its header line). */
  blockOverhead: number;
}

export interface WindowPlan {
  /** Item indexes of each block in reading order; blocks best first. */
  blocks: number[][];
  /** Matching messages (score > 0) neither shown nor inside a shown window because the budget was spent. */
  leftOut: number[];
  tokens: number;
}

/** Index of each item's neighbours within `radius`, following consecutive positions only. Items must be sorted by position. */
function around(items: readonly WindowItem[], center: number, radius: number): number[] {
  const out = [center];
  for (let j = center - 1; j >= 0 && center - j <= radius && items[j + 1]!.position - items[j]!.position === 1; j--) out.unshift(j);
  for (let j = center + 1; j < items.length && j - center <= radius && items[j]!.position - items[j - 1]!.position === 1; j++) out.push(j);
  return out;
}

/**
 * Each item's terms followed by those of its neighbours within `radius` (consecutive positions only), as
 * documents for BM25. Items must be sorted by position.
 */
export function withNeighbourTerms(items: readonly WindowItem[], terms: ReadonlyArray<readonly string[]>, radius: number): string[][] {
  return items.map((_, i) => around(items, i, radius).flatMap((j) => terms[j]!));
}

/** Windows around the best-scoring items, best first, within the budget. Items must be sorted by position. */
export function pickWindows(items: readonly WindowItem[], scores: readonly number[], options: WindowOptions): WindowPlan {
  const centers = scores
    .map((score, i) => ({ score, i }))
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i);
  const rank = new Map<number, number>();
  const leftOut: number[] = [];
  const groups = new Set<number>();
  let used = 0;
  for (const { i } of centers) {
    if (rank.has(i)) continue;
    const window = around(items, i, options.radius);
    const fresh = window.filter((j) => !rank.has(j));
    const first = window[0]!;
    const last = window[window.length - 1]!;
    const touches =
      window.some((j) => rank.has(j)) ||
      (first > 0 && rank.has(first - 1) && items[first]!.position - items[first - 1]!.position === 1) ||
      (last + 1 < items.length && rank.has(last + 1) && items[last + 1]!.position - items[last]!.position === 1);
    const newGroups = new Map<number, number>();
    for (const j of fresh) {
      const { group, groupTokens } = items[j]!;
      if (group !== undefined && !groups.has(group)) newGroups.set(group, groupTokens ?? 0);
    }
    const cost = fresh.reduce((s, j) => s + items[j]!.tokens, 0) + [...newGroups.values()].reduce((s, t) => s + t, 0) + (touches ? 0 : options.blockOverhead);
    if (used + cost > options.budget) {
      leftOut.push(i);
      continue;
    }
    used += cost;
    for (const j of fresh) rank.set(j, rank.size);
    for (const group of newGroups.keys()) groups.add(group);
  }
  const shown = [...rank.keys()].sort((a, b) => a - b);
  const blocks: number[][] = [];
  for (const j of shown) {
    const block = blocks[blocks.length - 1];
    const previous = block?.[block.length - 1];
    if (block && previous === j - 1 && items[j]!.position - items[previous]!.position === 1) block.push(j);
    else blocks.push([j]);
  }
  const best = (block: number[]) => Math.min(...block.map((j) => rank.get(j)!));
  blocks.sort((a, b) => best(a) - best(b));
  return { blocks, leftOut: leftOut.filter((i) => !rank.has(i)), tokens: used };
}
