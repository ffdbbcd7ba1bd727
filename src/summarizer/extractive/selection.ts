/**
 * Pick the units to keep: greedy coverage of weighted words under a character budget. Each round takes
 * the unit with the best (new weight covered x section bonus x salience) / cost^COST_EXPONENT, its cost being
 * the characters it adds to the layout (line prefix included when it opens a line); once a word is kept,
 * further mentions of it count for REPEAT_VALUE of its weight (the redundancy penalty). Whole units only.
 */
import { SECTION_BONUS, weightedWords } from './classify.js';
import type { Layout } from './render.js';
import { salience } from './salience.js';
import type { Unit } from './units.js';

/** Share of a word's weight still earned by a second mention. */
const REPEAT_VALUE = 0.25;
/** Below 1 favours whole sentences over short fragments (.7 measured better than .85 and .5 on LoCoMo). */
const COST_EXPONENT = 0.7;
/** Content words (a number counts twice) a unit needs to be considered. */
const MIN_CONTENT_WORDS = 2;
/** A unit whose weighted words are this covered by the previous summary is not repeated. */
const PREVIOUS_OVERLAP_SKIP = 0.8;

function sameText(unit: Unit): string {
  return unit.text.toLowerCase().replace(/\s+/g, ' ').trim();
}

export interface Selection {
  chosen: Set<Unit>;
  /** Characters used, as the layout counts them (an upper bound of the rendered length). */
  used: number;
}

/** Choose units within `budgetChars` into `layout`; words of `previousSummary` count as already said. */
export function selectUnits(units: Unit[], budgetChars: number, layout: Layout, previousSummary?: string): Selection {
  const value = new Map<string, number>();
  // A unit needs two content words (or a number) to be worth a line: "Caroline!" alone says nothing.
  let candidates = units.filter((u) => {
    let content = 0;
    for (const [w, weight] of u.words) if (weight > 0) content += /\d/.test(w) ? 2 : 1;
    return content >= MIN_CONTENT_WORDS;
  });
  if (previousSummary) {
    const said = weightedWords(previousSummary);
    candidates = candidates.filter((u) => {
      let total = 0;
      let overlap = 0;
      for (const [w, weight] of u.words) {
        total += weight;
        if (said.has(w)) overlap += weight;
      }
      return total === 0 || overlap / total < PREVIOUS_OVERLAP_SKIP;
    });
    for (const w of said.keys()) value.set(w, REPEAT_VALUE);
  }
  const gain = (u: Unit): number => {
    let g = 0;
    for (const [w, weight] of u.words) g += weight * (value.get(w) ?? 1);
    return g * SECTION_BONUS[u.section] * salience(u);
  };

  const chosen = new Set<Unit>();
  let used = 0;
  let pool = candidates;
  // Each unit's text as compared is made once, not once per unit chosen (that was a third of a fold's time).
  const texts = new Map<Unit, string>();
  const textOf = (u: Unit): string => {
    const known = texts.get(u);
    if (known !== undefined) return known;
    const text = sameText(u);
    texts.set(u, text);
    return text;
  };
  for (;;) {
    let best: Unit | undefined;
    let bestScore = 0;
    let bestCost = 0;
    const next: Unit[] = [];
    for (const u of pool) {
      const c = layout.cost(u);
      next.push(u);
      if (used + c > budgetChars) continue; // may fit later, as the continuation of a line already chosen
      const g = gain(u);
      if (g <= 0) continue;
      const score = g / c ** COST_EXPONENT;
      // Ties go to the earlier unit, so the result is deterministic.
      if (score > bestScore) {
        best = u;
        bestScore = score;
        bestCost = c;
      }
    }
    if (!best) break;
    chosen.add(best);
    layout.add(best);
    used += bestCost;
    for (const w of best.words.keys()) value.set(w, (value.get(w) ?? 1) * REPEAT_VALUE);
    // A sentence said again word for word adds nothing: drop its repeats from the pool.
    const said = textOf(best);
    pool = next.filter((u) => u !== best && textOf(u) !== said);
  }
  return { chosen, used };
}
