/** The price table, pure: lookup by exact then normalized name, costs, and overrides checked field by field. */
import { describe, expect, it } from 'vitest';
import { costOf, costOfModels } from '../../src/cost/cost-of.js';
import { DEFAULT_PRICES, PRICES_AS_OF } from '../../src/cost/default-prices.js';
import { normalizeModelName, priceOf } from '../../src/cost/price-of.js';
import { resolvePrices } from '../../src/cost/resolve-prices.js';
import { InvalidConfigError } from '../../src/errors.js';
import { PROVIDER_SUMMARY_MODELS } from '../../src/openai/summary-model.js';

function configError(run: () => unknown): InvalidConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidConfigError) return error;
    throw error;
  }
  throw new Error('expected an InvalidConfigError');
}

describe('DEFAULT_PRICES', () => {
  it('prices every provider default summary model, dated; the offline summarizer and supplied summaries cost 0', () => {
    for (const { model } of Object.values(PROVIDER_SUMMARY_MODELS)) expect(priceOf(model, DEFAULT_PRICES), model).toBeDefined();
    for (const [model, price] of Object.entries(DEFAULT_PRICES)) {
      expect(price.asOf, model).toBe(PRICES_AS_OF);
      for (const rate of [price.input, price.output, price.cachedInput]) expect(Number.isFinite(rate) && rate >= 0, model).toBe(true);
      expect(price.cachedInput, model).toBeLessThanOrEqual(price.input);
    }
    expect(costOf({ inputTokens: 10_000, outputTokens: 500 }, 'extractive', DEFAULT_PRICES)).toEqual({ usd: 0 });
    expect(costOf({ inputTokens: 0, outputTokens: 0 }, 'hook', DEFAULT_PRICES)).toEqual({ usd: 0 });
    expect(Object.isFrozen(DEFAULT_PRICES)).toBe(true);
  });
});

describe('priceOf', () => {
  it('takes the exact name first, then the name lower-cased, without provider prefix or snapshot date', () => {
    expect(normalizeModelName('OpenAI/GPT-4o-2024-08-06')).toBe('gpt-4o');
    expect(normalizeModelName('claude-sonnet-4-20250514')).toBe('claude-sonnet-4');
    expect(normalizeModelName('meta-llama/llama-3.1-8b-instant')).toBe('llama-3.1-8b-instant');
    expect(priceOf('gpt-4.1-mini-2025-04-14', DEFAULT_PRICES)).toBe(DEFAULT_PRICES['gpt-4.1-mini']);
    expect(priceOf('anthropic/claude-3-5-haiku-20241022', DEFAULT_PRICES)).toBe(DEFAULT_PRICES['claude-3-5-haiku']);
    // An exact entry wins over the normalized one.
    const table = { 'openai/x': { input: 1, output: 1, cachedInput: 1 }, x: { input: 2, output: 2, cachedInput: 2 } };
    expect(priceOf('openai/x', table)?.input).toBe(1);
    expect(priceOf('other/x', table)?.input).toBe(2);
    // Inherited keys are not models.
    expect(priceOf('constructor', DEFAULT_PRICES)).toBeUndefined();
  });
});

describe('costOf', () => {
  it('prices uncached input, cached input and output per million tokens', () => {
    // gpt-4.1-mini: $0.40 in, $0.10 cached, $1.60 out per million.
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 0 }, 'gpt-4.1-mini', DEFAULT_PRICES)).toEqual({ usd: 0.4 });
    expect(costOf({ inputTokens: 1_200, outputTokens: 300 }, 'gpt-4.1-mini', DEFAULT_PRICES)).toEqual({ usd: 0.00096 });
    expect(costOf({ inputTokens: 1_000, cachedInputTokens: 400, outputTokens: 0 }, 'gpt-4.1-mini', DEFAULT_PRICES)).toEqual({ usd: 0.00028 });
    // Cached tokens are part of the input: never more than it.
    expect(costOf({ inputTokens: 100, cachedInputTokens: 900, outputTokens: 0 }, 'gpt-4.1-mini', DEFAULT_PRICES)).toEqual({ usd: 0.00001 });
  });

  it('gives null with the reason for a model the table does not price', () => {
    expect(costOf({ inputTokens: 5, outputTokens: 5 }, 'llama3.1:8b', DEFAULT_PRICES)).toEqual({ usd: null, reason: 'unknown_model' });
    expect(costOfModels({}, DEFAULT_PRICES)).toEqual({ usd: 0 });
    expect(
      costOfModels({ 'gpt-4o-mini': { inputTokens: 1_000_000, outputTokens: 1_000_000 }, extractive: { inputTokens: 10, outputTokens: 10 } }, DEFAULT_PRICES),
    ).toEqual({ usd: 0.75 });
    expect(costOfModels({ 'gpt-4o-mini': { inputTokens: 1, outputTokens: 1 }, local: { inputTokens: 1, outputTokens: 1 } }, DEFAULT_PRICES)).toEqual({
      usd: null,
      reason: 'unknown_model',
    });
  });
});

describe('resolvePrices', () => {
  it('merges overrides over the defaults: a field of a known model, or a whole new model', () => {
    expect(resolvePrices(undefined)).toBe(DEFAULT_PRICES);
    const prices = resolvePrices({ 'gpt-4.1-mini': { output: 2 }, 'my-local': { input: 0.02, output: 0.05 }, 'gpt-4.1-mini-2025-04-14': { input: 1 } });
    expect(prices['gpt-4.1-mini']).toEqual({ input: 0.4, output: 2, cachedInput: 0.1 });
    // A dated key of a known model starts from the model's entry.
    expect(prices['gpt-4.1-mini-2025-04-14']).toEqual({ input: 1, output: 1.6, cachedInput: 0.1 });
    // A new model without a cached price gets no discount.
    expect(prices['my-local']).toEqual({ input: 0.02, output: 0.05, cachedInput: 0.02 });
    expect(prices['gpt-4o']).toBe(DEFAULT_PRICES['gpt-4o']);
    expect(DEFAULT_PRICES['gpt-4.1-mini']?.output).toBe(1.6);
    expect(Object.isFrozen(prices)).toBe(true);
  });

  it('refuses bad rates and fields, naming prices.<model>.<field>', () => {
    expect(configError(() => resolvePrices({ 'gpt-4o': { input: -1 } })).field).toBe('prices.gpt-4o.input');
    expect(configError(() => resolvePrices({ 'gpt-4o': { output: Number.NaN } })).field).toBe('prices.gpt-4o.output');
    expect(configError(() => resolvePrices({ 'gpt-4o': { cachedInput: Infinity } })).field).toBe('prices.gpt-4o.cachedInput');
    expect(configError(() => resolvePrices({ 'gpt-4o': { input: '2' as unknown as number } })).message).toBe(
      'Invalid config field prices.gpt-4o.input: must be a finite number >= 0, in US dollars per million tokens (got 2)',
    );
    expect(configError(() => resolvePrices({ 'gpt-4o': { inptu: 1 } as never })).field).toBe('prices.gpt-4o.inptu');
    expect(configError(() => resolvePrices({ 'my-local': { input: 1 } })).field).toBe('prices.my-local.output');
    expect(configError(() => resolvePrices({ 'my-local': { output: 1 } })).field).toBe('prices.my-local.input');
    expect(configError(() => resolvePrices({ 'gpt-4o': null as never })).field).toBe('prices.gpt-4o');
    expect(configError(() => resolvePrices([] as never)).field).toBe('prices');
  });
});
