/**
 * List prices in US dollars per million tokens, taken by hand from the providers' price pages as of PRICES_AS_OF.
 * Data, not truth: prices change and differ by region, tier and contract, so applications check them and override
 * (`createMemfold({ prices })`, `resolvePrices`). Not modelled: Anthropic's cache writes (1.25 × input), long-context
 * tiers (Gemini 2.5 Pro above 200k prompt tokens), batch and flex discounts.
 */
import type { ModelPrice, PriceTable } from './model-price.js';

/** When the default prices were taken. */
export const PRICES_AS_OF = '2025-11';

const at = (input: number, output: number, cachedInput: number = input): ModelPrice => ({ input, output, cachedInput, asOf: PRICES_AS_OF });
/** Summaries that took no paid call: the offline summarizer (`extractive`, also the fallback) and `beforeCompact`'s (`hook`). */
const FREE: ModelPrice = { input: 0, output: 0, cachedInput: 0, asOf: PRICES_AS_OF };

export const DEFAULT_PRICES: PriceTable = Object.freeze({
  extractive: FREE,
  hook: FREE,
  // OpenAI (cached input: the automatic prompt cache).
  'gpt-4.1': at(2, 8, 0.5),
  'gpt-4.1-mini': at(0.4, 1.6, 0.1),
  'gpt-4.1-nano': at(0.1, 0.4, 0.025),
  'gpt-4o': at(2.5, 10, 1.25),
  'gpt-4o-mini': at(0.15, 0.6, 0.075),
  'gpt-5': at(1.25, 10, 0.125),
  'gpt-5.1': at(1.25, 10, 0.125),
  'gpt-5-mini': at(0.25, 2, 0.025),
  'gpt-5-nano': at(0.05, 0.4, 0.005),
  o3: at(2, 8, 0.5),
  'o3-mini': at(1.1, 4.4, 0.55),
  'o4-mini': at(1.1, 4.4, 0.275),
  // OpenRouter passes OpenAI's price through; named here because it is a provider default (summary-model.ts).
  'openai/gpt-4.1-mini': at(0.4, 1.6, 0.1),
  // Anthropic (cached input: cache reads).
  'claude-opus-4-5': at(5, 25, 0.5),
  'claude-opus-4-1': at(15, 75, 1.5),
  'claude-opus-4': at(15, 75, 1.5),
  'claude-sonnet-4-5': at(3, 15, 0.3),
  'claude-sonnet-4': at(3, 15, 0.3),
  'claude-3-7-sonnet': at(3, 15, 0.3),
  'claude-3-5-sonnet': at(3, 15, 0.3),
  'claude-haiku-4-5': at(1, 5, 0.1),
  'claude-3-5-haiku': at(0.8, 4, 0.08),
  'claude-3-haiku': at(0.25, 1.25, 0.03),
  // Google (prompts up to 200k tokens).
  'gemini-2.5-pro': at(1.25, 10, 0.31),
  'gemini-2.5-flash': at(0.3, 2.5, 0.075),
  'gemini-2.5-flash-lite': at(0.1, 0.4, 0.025),
  // Mistral, DeepSeek (V3.2 prices; cached input: cache hits), Groq.
  'mistral-small-latest': at(0.1, 0.3),
  'mistral-medium-latest': at(0.4, 2),
  'mistral-large-latest': at(2, 6),
  'deepseek-chat': at(0.28, 0.42, 0.028),
  'deepseek-reasoner': at(0.28, 0.42, 0.028),
  'llama-3.1-8b-instant': at(0.05, 0.08),
  'llama-3.3-70b-versatile': at(0.59, 0.79),
});
