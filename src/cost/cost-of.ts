import type { PriceTable, TokenUsage } from './model-price.js';
import { priceOf } from './price-of.js';

/** A cost in US dollars, or null with the reason when the model has no price. */
export type Cost = { usd: number } | { usd: null; reason: 'unknown_model' };

/** Usage per model, as a compaction result records it (`usageByModel`). */
export type UsageByModel = Readonly<Record<string, TokenUsage>>;

/** Dollars to 1e-10, so sums of float prices print as they should (0.000124, not 0.00012400000000000001). */
export const roundUsd = (usd: number) => Math.round(usd * 1e10) / 1e10;

/**
 * What `usage` costs on `model` at `prices`: uncached input, cached input and output tokens, each at its price per
 * million. Cached tokens beyond the input are not counted twice (they are capped at `inputTokens`). Pure.
 */
export function costOf(usage: TokenUsage, model: string, prices: PriceTable): Cost {
  const price = priceOf(model, prices);
  if (!price) return { usd: null, reason: 'unknown_model' };
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  return { usd: roundUsd(((usage.inputTokens - cached) * price.input + cached * price.cachedInput + usage.outputTokens * price.output) / 1e6) };
}

/** The sum of every model's cost: null (`unknown_model`) when any model with usage has no price. Pure. */
export function costOfModels(usage: UsageByModel, prices: PriceTable): Cost {
  let usd = 0;
  for (const [model, used] of Object.entries(usage)) {
    const cost = costOf(used, model, prices);
    if (cost.usd === null) return cost;
    usd += cost.usd;
  }
  return { usd: roundUsd(usd) };
}
