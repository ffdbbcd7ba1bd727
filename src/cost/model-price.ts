/** The price of one model, in US dollars per million tokens. */
export interface ModelPrice {
  /** Input (prompt) tokens not served from the provider's prompt cache. */
  input: number;
  /** Output (completion) tokens, reasoning tokens included where the provider bills them as output. */
  output: number;
  /** Input tokens the provider served from its prompt cache; equal to `input` where it gives no discount. */
  cachedInput: number;
  /** When the price was taken (`YYYY-MM`), or absent for a price the application set. Prices change: check them. */
  asOf?: string;
}

/** Prices by model name, as `priceOf` looks them up (exact name, then the normalized name). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** Token usage to price: one request's, or summed over requests to the same model. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those the provider served from its prompt cache. Default 0. */
  cachedInputTokens?: number;
}

/** One model's usage over a compaction: its calls (a summary `beforeCompact` supplied takes none) and their tokens. */
export interface ModelUsage extends TokenUsage {
  calls: number;
}
