import type { ModelPrice, PriceTable } from './model-price.js';

/** A date suffix providers add to pinned snapshots: `-2024-08-06` (OpenAI) or `-20250514` (Anthropic). */
const DATE_SUFFIX = /-(?:\d{4}-\d{2}-\d{2}|\d{8})$/;

/** The name a table is keyed by: lower case, any provider prefix (`openai/`) and snapshot date dropped. */
export function normalizeModelName(model: string): string {
  const lower = model.trim().toLowerCase();
  return lower.slice(lower.lastIndexOf('/') + 1).replace(DATE_SUFFIX, '');
}

/** The price of `model`: the entry of its exact name, else of its normalized name; undefined when the table has neither. */
export function priceOf(model: string, prices: PriceTable): ModelPrice | undefined {
  if (Object.hasOwn(prices, model)) return prices[model];
  const normalized = normalizeModelName(model);
  return Object.hasOwn(prices, normalized) ? prices[normalized] : undefined;
}
