import { InvalidConfigError } from '../errors.js';
import { DEFAULT_PRICES } from './default-prices.js';
import type { ModelPrice, PriceTable } from './model-price.js';
import { priceOf } from './price-of.js';

/**
 * Prices the application sets, by model name (`createMemfold({ prices })`). For a model the table prices (by exact
 * or normalized name) any field may be given, the rest kept; a model it does not price needs `input` and `output`,
 * and `cachedInput` defaults to `input` (no cache discount). Key a model by its normalized name (lower case, no
 * provider prefix, no date) to price every snapshot of it.
 */
export type PriceOverrides = Readonly<Record<string, Partial<ModelPrice>>>;

const FIELDS = ['input', 'output', 'cachedInput'] as const;

function checkRate(model: string, field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidConfigError(`prices.${model}.${field}`, `must be a finite number >= 0, in US dollars per million tokens (got ${String(value)})`);
  }
  return value;
}

/** One override, checked and merged over the entry the base table has for it. */
function resolveEntry(model: string, override: unknown, base: PriceTable): ModelPrice {
  if (typeof override !== 'object' || override === null || Array.isArray(override)) {
    throw new InvalidConfigError(`prices.${model}`, 'must be an object { input?, output?, cachedInput?, asOf? }');
  }
  const given = override as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!(FIELDS as readonly string[]).includes(key) && key !== 'asOf') {
      throw new InvalidConfigError(`prices.${model}.${key}`, 'unknown field (input, output, cachedInput, asOf)');
    }
  }
  const known = priceOf(model, base);
  const rate = (field: (typeof FIELDS)[number]): number | undefined => (given[field] === undefined ? known?.[field] : checkRate(model, field, given[field]));
  const input = rate('input');
  const output = rate('output');
  if (input === undefined) throw new InvalidConfigError(`prices.${model}.input`, 'is required for a model the price table does not hold');
  if (output === undefined) throw new InvalidConfigError(`prices.${model}.output`, 'is required for a model the price table does not hold');
  // An override that changes the input price but not the cached one of an unknown model: no discount assumed.
  const cachedInput = rate('cachedInput') ?? input;
  if (given['asOf'] !== undefined && typeof given['asOf'] !== 'string') throw new InvalidConfigError(`prices.${model}.asOf`, 'must be a string');
  const asOf = given['asOf'] as string | undefined;
  return { input, output, cachedInput, ...(asOf !== undefined ? { asOf } : {}) };
}

/**
 * The price table: `base` (default DEFAULT_PRICES) with the application's overrides merged in, checked first: every
 * rate a finite number >= 0, errors naming `prices.<model>.<field>` (InvalidConfigError). Pure; returns a frozen table.
 */
export function resolvePrices(overrides: PriceOverrides | undefined, base: PriceTable = DEFAULT_PRICES): PriceTable {
  if (overrides === undefined) return base;
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    throw new InvalidConfigError('prices', 'must be an object of prices by model name');
  }
  const table: Record<string, ModelPrice> = { ...base };
  for (const [model, override] of Object.entries(overrides)) {
    if (model.trim() === '') throw new InvalidConfigError('prices', 'model names must be non-empty');
    table[model] = resolveEntry(model, override, base);
  }
  return Object.freeze(table);
}
