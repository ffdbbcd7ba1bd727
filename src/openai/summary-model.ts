/**
 * Which model writes the summaries when none is named, pure: `MEMFOLD_SUMMARY_MODEL`, else a cheap model of the
 * provider the endpoint belongs to, else the assistant's own model (`MEMFOLD_MODEL`), else the offline summarizer.
 * A remote model is chosen only when an endpoint is configured (a base URL or an API key, `MEMFOLD_OPENAI_*` or `OPENAI_*`): with neither,
 * nothing leaves the machine.
 */

/** Where the choice came from (`adapter`: the application passed its own summarizer; `createMemfold` sets it). */
export type SummaryModelSource = 'summary_model' | 'provider_default' | 'assistant_model' | 'offline' | 'adapter';

export interface SummaryModelChoice {
  /** The model to ask; absent for the offline summarizer. */
  model?: string;
  source: SummaryModelSource;
  /** The provider the endpoint was recognised as, for `provider_default`. */
  provider?: string;
}

/**
 * A cheap chat model per provider host: good enough to summarize, priced far below the assistant models. Hosts only
 * (the path of the base URL does not matter); any other endpoint (a local server, a proxy) has no default.
 */
export const PROVIDER_SUMMARY_MODELS: Readonly<Record<string, { provider: string; model: string }>> = {
  'api.openai.com': { provider: 'OpenAI', model: 'gpt-4.1-mini' },
  'openrouter.ai': { provider: 'OpenRouter', model: 'openai/gpt-4.1-mini' },
  'api.mistral.ai': { provider: 'Mistral', model: 'mistral-small-latest' },
  'api.deepseek.com': { provider: 'DeepSeek', model: 'deepseek-chat' },
  'api.groq.com': { provider: 'Groq', model: 'llama-3.1-8b-instant' },
  // The OpenAI-compatible endpoints of Anthropic (`https://api.anthropic.com/v1`) and Google
  // (`https://generativelanguage.googleapis.com/v1beta/openai`).
  'api.anthropic.com': { provider: 'Anthropic', model: 'claude-haiku-4-5' },
  'generativelanguage.googleapis.com': { provider: 'Google', model: 'gemini-2.5-flash-lite' },
};

/** The host the `openai` client calls: the base URL's, or OpenAI's when none is set. */
function endpointHost(baseUrl: string | undefined): string {
  if (baseUrl === undefined) return 'api.openai.com';
  try {
    return new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return '';
  }
}

export function chooseSummaryModel(config: {
  summaryModel?: string;
  assistantModel?: string;
  openaiBaseUrl?: string;
  openaiApiKey?: string;
}): SummaryModelChoice {
  if (config.summaryModel) return { model: config.summaryModel, source: 'summary_model' };
  const endpoint = config.openaiBaseUrl !== undefined || config.openaiApiKey !== undefined;
  if (!endpoint) return { source: 'offline' };
  const known = PROVIDER_SUMMARY_MODELS[endpointHost(config.openaiBaseUrl)];
  if (known) return { model: known.model, source: 'provider_default', provider: known.provider };
  if (config.assistantModel) return { model: config.assistantModel, source: 'assistant_model' };
  return { source: 'offline' };
}
